package expvarmetrics_test

import (
	"encoding/json"
	"expvar"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/observe"
	"github.com/gocuda/gocuda/observe/expvarmetrics"
	"github.com/gocuda/gocuda/pool"
)

func TestPublishServesTheProcessPoolsAtDebugVars(t *testing.T) {
	require.Nil(t, expvar.Get(expvarmetrics.Name), "nothing is published before Publish")
	require.NoError(t, expvarmetrics.Publish())
	require.NoError(t, expvarmetrics.Publish(), "publishing again does nothing")

	p, err := gocuda.Pool(0)
	require.NoError(t, err)
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	s, err := dev.NewStream()
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.Destroy()) }()
	b, err := p.Alloc(3<<20, s)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.Free(b, s)) }()

	// What a scraper sees: expvar's handler, as /debug/vars serves it.
	srv := httptest.NewServer(expvar.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var vars map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &vars))
	require.Contains(t, vars, expvarmetrics.Name)
	var got observe.Snapshot
	require.NoError(t, json.Unmarshal(vars[expvarmetrics.Name], &got))
	require.NotEmpty(t, got.Devices)
	assert.Equal(t, 0, got.Devices[0].Device)
	assert.Equal(t, p.Name(), got.Devices[0].Pool)
	assert.GreaterOrEqual(t, got.Devices[0].LiveBytes, uint64(3<<20), "read when fetched, after the allocation")
	assert.NotNil(t, got.Devices[0].Pressure, "the root package's pools have the pressure layer")
}

func TestPublishMetricsRefusesTakenEmptyAndNil(t *testing.T) {
	m := observe.NewMetrics(func() []pool.Pool { return nil })
	defer m.Close()
	require.NoError(t, expvarmetrics.PublishMetrics("expvarmetrics-test", m))
	assert.JSONEq(t, `{"devices":[]}`, expvar.Get("expvarmetrics-test").String())

	for _, tc := range []struct {
		name string
		m    *observe.Metrics
		err  string
	}{
		{"expvarmetrics-test", m, `expvar name "expvarmetrics-test" is already published; pick another`},
		{"memstats", m, `"memstats" is already published`},
		{"", m, "the expvar name is empty"},
		{"expvarmetrics-nil", nil, "needs Metrics (observe.NewMetrics), got nil"},
	} {
		assert.ErrorContains(t, expvarmetrics.PublishMetrics(tc.name, tc.m), tc.err, "name %q", tc.name)
	}
	assert.Nil(t, expvar.Get("expvarmetrics-nil"))
}
