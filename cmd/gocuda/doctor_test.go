package main

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/internal/nvml"
)

func TestDoctorShowsTheCallPath(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, doctor(&out, nil))
	assert.Contains(t, out.String(), "\n  call path: "+cuda.CallPath()+"\n")
}

func TestDoctorPrintsUUIDsAsNvidiaSmiDoes(t *testing.T) {
	u := cuda.UUID{0xde, 0xad, 0xbe, 0xef, 0xab, 0xcd, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0xff}
	for _, tc := range []struct {
		name string
		err  error
		mig  nvml.MIG
		want string
	}{
		{"a GPU", nil, nvml.MIG{}, "GPU-deadbeef-abcd-1234-5678-9abcdef001ff"},
		{"a GPU with MIG off", nil, nvml.MIG{Supported: true}, "GPU-deadbeef-abcd-1234-5678-9abcdef001ff"},
		{"a MIG instance", nil, nvml.MIG{Supported: true, Current: true}, "MIG-deadbeef-abcd-1234-5678-9abcdef001ff (a MIG instance)"},
		{"an old driver", errors.New("cuda: cuDeviceGetUuid_v2: missing"), nvml.MIG{}, "unknown: cuda: cuDeviceGetUuid_v2: missing"},
	} {
		assert.Equal(t, tc.want, uuidText(u, tc.err, tc.mig), tc.name)
	}
}

func TestDoctorSaysMIGModeAndWhatAResetChanges(t *testing.T) {
	for _, tc := range []struct {
		m    nvml.MIG
		err  error
		want string
	}{
		{nvml.MIG{}, nil, "not supported by this GPU"},
		{nvml.MIG{Supported: true}, nil, "disabled"},
		{nvml.MIG{Supported: true, Current: true, Pending: true}, nil, "enabled"},
		{nvml.MIG{Supported: true, Pending: true}, nil, "disabled, enabled after the next GPU reset"},
		{nvml.MIG{Supported: true, Current: true}, nil, "enabled, disabled after the next GPU reset"},
		{nvml.MIG{}, errors.New("nvml: nvmlInit_v2: Driver Not Loaded (9)"), "unknown: nvml: nvmlInit_v2: Driver Not Loaded (9)"},
	} {
		assert.Equal(t, tc.want, migText(tc.m, tc.err), "%+v %v", tc.m, tc.err)
	}
}

func TestDoctorSaysWhatEveryKnobParsedTo(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"GOCUDA_IDLE_TRIM=5m", "idle trim after 5m0s"},
		{"GOCUDA_IDLE_TRIM=off", "idle trim off"},
		{"GOCUDA_GC_EARLY=false", "early collection off"},
		{"GOCUDA_NCCL_LIBRARY=/opt/nccl/libnccl.so.2", "nccl library /opt/nccl/libnccl.so.2"},
		{"GOCUDA_NCCL_LIBRARY=", "nccl library searched for"},
		{"GOCUDA_CUBLAS_LIBRARY=/opt/cuda/libcublas.so.13", "cuBLAS from /opt/cuda/libcublas.so.13"},
		{"GOCUDA_CUBLAS_LIBRARY=", "cuBLAS searched for"},
		{"GOCUDA_CURAND_LIBRARY=/opt/cuda/libcurand.so.10", "cuRAND from /opt/cuda/libcurand.so.10"},
		{"GOCUDA_RENDEZVOUS_TIMEOUT=5m", "ranks wait 5m0s for each other"},
		{"GOCUDA_RENDEZVOUS_TIMEOUT=", "ranks wait 2m0s for each other"},
	} {
		var out bytes.Buffer
		require.NoError(t, doctor(&out, []string{tc.env}))
		assert.Contains(t, out.String(), tc.want, tc.env)
	}
	var out bytes.Buffer
	require.NoError(t, doctor(&out, nil))
	for _, name := range []string{"GOCUDA_IDLE_TRIM", "GOCUDA_STREAM_CHECK", "GOCUDA_MEMORY_POOL", "GOCUDA_RENDEZVOUS_TIMEOUT"} {
		assert.Regexp(t, name+` +\(unset\) +\S`, out.String(), "every knob's parsed value is shown")
	}
}
