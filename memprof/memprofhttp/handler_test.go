package memprofhttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/memprof"
	"github.com/gocuda/gocuda/memprof/memprofhttp"
)

// get fetches srv's URL with query and returns the response and its body.
func get(t *testing.T, srv *httptest.Server, query string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(srv.URL + query)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

func TestHandlerServesTheProfileAndTheReport(t *testing.T) {
	memprof.Enable()
	t.Cleanup(memprof.Disable)
	_, file, line, _ := runtime.Caller(0)
	a, err := cuarray.New[float32](1024) // the traced allocation: line+1 of the Caller above
	require.NoError(t, err)
	defer a.UnsafeFree()
	srv := httptest.NewServer(memprofhttp.Handler())
	defer srv.Close()

	resp, body := get(t, srv, "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "application/octet-stream", resp.Header.Get("Content-Type"))
	p, err := profile.ParseData(body)
	require.NoError(t, err)
	assert.NotEmpty(t, p.Sample)

	resp, body = get(t, srv, "?debug=1")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	assert.Contains(t, string(body), fmt.Sprintf("%s:%d", file, line+1))

	for _, bad := range []string{"yes", "-1"} {
		resp, body = get(t, srv, "?debug="+bad)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "debug=%s", bad)
		assert.Contains(t, string(body), "accepted values are 0 (pprof profile) and 1 (text report)")
	}
}

func TestHandlerSaysHowToTurnTracingOn(t *testing.T) {
	memprof.Disable()
	srv := httptest.NewServer(memprofhttp.Handler())
	defer srv.Close()
	// Nothing in this package leaves traced buffers live, so with tracing
	// off the answer is the explanation, not an empty profile.
	resp, body := get(t, srv, "")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, string(body), "GOCUDA_DEBUG=leaks")
}

func TestHandlerServesBuffersTracedBeforeTracingWasTurnedOff(t *testing.T) {
	memprof.Enable()
	a, err := cuarray.New[float32](1024)
	require.NoError(t, err)
	memprof.Disable()
	srv := httptest.NewServer(memprofhttp.Handler())
	defer srv.Close()

	resp, body := get(t, srv, "?debug=1")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a traced buffer is still live: %s", body)

	a.UnsafeFree()
	resp, _ = get(t, srv, "?debug=1")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "none is live any more")
}
