module github.com/gocuda/gocuda

go 1.26.0

require (
	github.com/dustin/go-humanize v1.1.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/atomic v1.12.0
	golang.org/x/sys v0.32.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
