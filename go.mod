module github.com/gocuda/gocuda

go 1.24

require (
	github.com/chzyer/readline v1.5.1 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/pprof v0.0.0-20261016150608-1facf8f91b50 // indirect
	github.com/ianlancetaylor/demangle v0.0.0-20250417193237-f615e6bd150b // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.32.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)
