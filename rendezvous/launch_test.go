package rendezvous

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/config"
)

func lookupIn(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// with returns base with the changes: "" removes a variable.
func with(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

// What each launcher sets, as seen on the machines (torchrun 2.11's
// --nproc-per-node 2 --no-python) or documented.
var (
	gocudaEnv = map[string]string{"GOCUDA_RANK": "1", "GOCUDA_WORLD_SIZE": "4", "GOCUDA_LOCAL_RANK": "1",
		"GOCUDA_RENDEZVOUS": "127.0.0.1:40000", "GOCUDA_JOB": "launch-abc"}
	torchEnv = map[string]string{"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "0",
		"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500", "TORCHELASTIC_RUN_ID": "none", "TORCHELASTIC_RESTART_COUNT": "0",
		"TORCHELASTIC_USE_AGENT_STORE": "True", "TORCHELASTIC_MAX_RESTARTS": "0", "TORCHELASTIC_ERROR_FILE": "/tmp/x/error.json"}
	ompiEnv = map[string]string{"OMPI_COMM_WORLD_RANK": "9", "OMPI_COMM_WORLD_SIZE": "16", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
		"OMPI_MCA_ess_base_jobid": "3735289857", "PMIX_NAMESPACE": "prterun-host0-1234@1", "MASTER_ADDR": "host0", "MASTER_PORT": "29500"}
	slurmEnv = map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1", "SLURM_JOB_ID": "4242",
		"SLURM_STEP_ID": "0", "MASTER_ADDR": "node01", "MASTER_PORT": "29500"}
)

func TestFromEnvReadsEachLauncher(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Launch
	}{
		{"gocuda launch", gocudaEnv, Launch{"gocuda", 1, 4, 1, "127.0.0.1:40000", "launch-abc", HostedByLauncher}},
		{"gocuda, local rank defaults to the rank", with(gocudaEnv, "GOCUDA_LOCAL_RANK", ""), Launch{"gocuda", 1, 4, 1, "127.0.0.1:40000", "launch-abc", HostedByLauncher}},
		{"gocuda by hand, rank 0 hosts at MASTER_ADDR", with(gocudaEnv, "GOCUDA_RENDEZVOUS", "", "GOCUDA_JOB", "", "MASTER_ADDR", "host0", "MASTER_PORT", "29500"),
			Launch{"gocuda", 1, 4, 1, "host0:29500", "", HostedByRankZero}},
		{"gocuda, one rank needs no address", map[string]string{"GOCUDA_RANK": "0", "GOCUDA_WORLD_SIZE": "1"}, Launch{"gocuda", 0, 1, 0, "127.0.0.1:0", "", HostedByRankZero}},
		{"gocuda wins over torchrun and Slurm", with(gocudaEnv, "RANK", "0", "WORLD_SIZE", "2", "SLURM_PROCID", "3", "SLURM_STEP_ID", "0"),
			Launch{"gocuda", 1, 4, 1, "127.0.0.1:40000", "launch-abc", HostedByLauncher}},
		{"torchrun with the agent's store", torchEnv, Launch{"torchrun", 1, 2, 1, "127.0.0.1:29500", "none/0", HostedByTorchAgent}},
		{"torchrun, a restart is another job", with(torchEnv, "TORCHELASTIC_RESTART_COUNT", "2"), Launch{"torchrun", 1, 2, 1, "127.0.0.1:29500", "none/2", HostedByTorchAgent}},
		{"torchrun without the agent's store", with(torchEnv, "TORCHELASTIC_USE_AGENT_STORE", "False"), Launch{"torchrun", 1, 2, 1, "127.0.0.1:29500", "none/0", HostedByRankZero}},
		{"torchrun's variables without torchelastic", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "h", "MASTER_PORT": "1234"},
			Launch{"torchrun", 0, 2, 0, "h:1234", "", HostedByRankZero}},
		{"torchrun inside Slurm", with(torchEnv, "SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_LOCALID", "0", "SLURM_STEP_ID", "1"),
			Launch{"torchrun", 1, 2, 1, "127.0.0.1:29500", "none/0", HostedByTorchAgent}},
		{"mpirun", ompiEnv, Launch{"openmpi", 9, 16, 1, "host0:29500", "3735289857", HostedByRankZero}},
		{"mpirun, job from PMIx", with(ompiEnv, "OMPI_MCA_ess_base_jobid", ""), Launch{"openmpi", 9, 16, 1, "host0:29500", "prterun-host0-1234@1", HostedByRankZero}},
		{"mpirun, GOCUDA_RENDEZVOUS over MASTER_", with(ompiEnv, "GOCUDA_RENDEZVOUS", "10.0.0.1:4000"), Launch{"openmpi", 9, 16, 1, "10.0.0.1:4000", "3735289857", HostedByRankZero}},
		{"mpirun inside Slurm", with(ompiEnv, "SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_STEP_ID", "0"), Launch{"openmpi", 9, 16, 1, "host0:29500", "3735289857", HostedByRankZero}},
		{"srun", slurmEnv, Launch{"slurm", 5, 8, 1, "node01:29500", "4242.0", HostedByRankZero}},
		{"srun, old spellings", with(slurmEnv, "SLURM_NTASKS", "", "SLURM_NPROCS", "8", "SLURM_JOB_ID", "", "SLURM_JOBID", "4242", "SLURM_STEP_ID", "", "SLURM_STEPID", "3"),
			Launch{"slurm", 5, 8, 1, "node01:29500", "4242.3", HostedByRankZero}},
		{"srun, IPv6 rendezvous", with(slurmEnv, "GOCUDA_RENDEZVOUS", "[fe80::1]:29500"), Launch{"slurm", 5, 8, 1, "[fe80::1]:29500", "4242.0", HostedByRankZero}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, ok, err := FromEnv(lookupIn(tc.env))
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, tc.want, l)
		})
	}
}

func TestFromEnvWithoutALauncherIsOneProcess(t *testing.T) {
	for _, env := range []map[string]string{
		nil,
		{"PATH": "/bin", "MASTER_ADDR": "host0", "MASTER_PORT": "29500"}, // exported, but nothing launched this
		{"GOCUDA_RENDEZVOUS": "h:1", "GOCUDA_JOB": "j"},
		{"GOCUDA_RANK": " ", "RANK": ""}, // empty is unset
		// The batch script's own shell: SLURM_PROCID=0, but no step.
		{"SLURM_PROCID": "0", "SLURM_NTASKS": "16", "SLURM_LOCALID": "0", "SLURM_JOB_ID": "1"},
	} {
		l, ok, err := FromEnv(lookupIn(env))
		require.NoError(t, err, "%v", env)
		assert.False(t, ok, "%v", env)
		assert.Zero(t, l)
	}
}

func TestFromEnvErrorsNameTheVariableTheValueAndWhatIsAccepted(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"srun without an address", with(slurmEnv, "MASTER_ADDR", "", "MASTER_PORT", "", "SLURM_PROCID", "1", "SLURM_NTASKS", "4"),
			"srun started this process as rank 1 of 4, but nothing says where rank 0 listens: export MASTER_ADDR and MASTER_PORT (or GOCUDA_RENDEZVOUS=host:port) in the job script"},
		{"mpirun without an address", with(ompiEnv, "MASTER_ADDR", "", "MASTER_PORT", ""),
			"mpirun started this process as rank 9 of 16, but nothing says where rank 0 listens: export MASTER_ADDR and MASTER_PORT (or GOCUDA_RENDEZVOUS=host:port) in the job script and pass them on with mpirun -x MASTER_ADDR -x MASTER_PORT"},
		{"gocuda without an address", with(gocudaEnv, "GOCUDA_RENDEZVOUS", ""), "GOCUDA_RANK=1 and GOCUDA_WORLD_SIZE=4 are set, but nothing says where rank 0 listens: set GOCUDA_RENDEZVOUS=host:port"},
		{"MASTER_ADDR without MASTER_PORT", with(ompiEnv, "MASTER_PORT", ""), "MASTER_ADDR=host0 is set but MASTER_PORT is not"},
		{"MASTER_PORT without MASTER_ADDR", with(slurmEnv, "MASTER_ADDR", ""), "MASTER_PORT=29500 is set but MASTER_ADDR is not"},
		{"a word for a rank", with(gocudaEnv, "GOCUDA_RANK", "one"), `GOCUDA_RANK="one" is not valid: accepted values are a whole number from 0 to 3 (GOCUDA_WORLD_SIZE is 4)`},
		{"a negative rank", with(ompiEnv, "OMPI_COMM_WORLD_RANK", "-1"), `OMPI_COMM_WORLD_RANK="-1" is not valid: accepted values are a whole number from 0 to 15`},
		{"rank past the size", with(slurmEnv, "SLURM_PROCID", "8"), `SLURM_PROCID="8" is not valid: accepted values are a whole number from 0 to 7 (SLURM_NTASKS is 8)`},
		{"local rank past the size", with(torchEnv, "LOCAL_RANK", "2"), `LOCAL_RANK="2" is not valid: accepted values are a whole number from 0 to 1`},
		{"size zero", with(gocudaEnv, "GOCUDA_WORLD_SIZE", "0"), `GOCUDA_WORLD_SIZE="0" is not valid: accepted values are a whole number from 1`},
		{"size absurd", with(gocudaEnv, "GOCUDA_WORLD_SIZE", "99999999999"), `GOCUDA_WORLD_SIZE="99999999999" is not valid: accepted values are a whole number from 1 to 1048576`},
		{"port out of range", with(ompiEnv, "MASTER_PORT", "70000"), `MASTER_PORT="70000" is not valid: accepted values are a port number from 1 to 65535`},
		{"port zero", with(slurmEnv, "MASTER_PORT", "0"), `MASTER_PORT="0" is not valid`},
		{"port a word", with(torchEnv, "MASTER_PORT", "http"), `MASTER_PORT="http" is not valid`},
		{"rendezvous without a port", with(gocudaEnv, "GOCUDA_RENDEZVOUS", "host0"), `GOCUDA_RENDEZVOUS="host0" is not valid: accepted values are host:port`},
		{"rendezvous without a host", with(gocudaEnv, "GOCUDA_RENDEZVOUS", ":29500"), "the host cannot be empty"},
		{"rendezvous port out of range", with(slurmEnv, "GOCUDA_RENDEZVOUS", "h:0"), `GOCUDA_RENDEZVOUS="h:0" is not valid: accepted values are host:port, as "10.0.0.1:29500", "host0:29500" or "[fe80::1]:29500" (the port from 1 to 65535)`},
		{"rank without size", map[string]string{"GOCUDA_RANK": "1"}, "gocuda launch's variables are partly set (GOCUDA_RANK=1): GOCUDA_WORLD_SIZE is missing; a launched rank needs GOCUDA_RANK and GOCUDA_WORLD_SIZE"},
		{"size without rank", map[string]string{"GOCUDA_WORLD_SIZE": "2"}, "GOCUDA_RANK is missing"},
		{"torchrun without RANK", with(torchEnv, "RANK", ""), "torchrun's variables are partly set (WORLD_SIZE=2, LOCAL_RANK=1): RANK is missing; a launched rank needs RANK, WORLD_SIZE and LOCAL_RANK"},
		{"mpirun without its local rank", with(ompiEnv, "OMPI_COMM_WORLD_LOCAL_RANK", ""), "OMPI_COMM_WORLD_LOCAL_RANK is missing"},
		{"srun without a task count", with(slurmEnv, "SLURM_NTASKS", ""), "SLURM_NTASKS or SLURM_NPROCS is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, ok, err := FromEnv(lookupIn(tc.env))
			require.Error(t, err)
			assert.True(t, ok, "a launcher's variables are there")
			assert.Zero(t, l)
			assert.Contains(t, err.Error(), tc.want)
			var ce *config.Error
			if errors.As(err, &ce) {
				assert.Contains(t, err.Error(), ce.Var, "a config.Error names its variable")
			}
		})
	}
}

func TestHostingNamesWhoServes(t *testing.T) {
	assert.Equal(t, "rank 0", HostedByRankZero.String())
	assert.Equal(t, "gocuda launch", HostedByLauncher.String())
	assert.Equal(t, "torchrun's agent", HostedByTorchAgent.String())
	assert.Equal(t, "Hosting(7)", Hosting(7).String())
}

func TestRanksText(t *testing.T) {
	assert.Equal(t, "rank 2 of 3", ranksText([]int{2}, 3))
	assert.Equal(t, "ranks 1 and 3 of 4", ranksText([]int{1, 3}, 4))
	assert.Equal(t, "ranks 1, 2 and 5 of 8", ranksText([]int{1, 2, 5}, 8))
	many := make([]int, 20)
	for i := range many {
		many[i] = i
	}
	assert.Equal(t, "ranks 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 and 4 more of 100", ranksText(many, 100))
}

func TestLocalDeviceIsTheLocalRankOrTheOneDeviceSeen(t *testing.T) {
	for _, tc := range []struct {
		local, devices, want int
		err                  string
	}{
		{0, 8, 0, ""},
		{7, 8, 7, ""},
		{3, 1, 0, ""}, // a GPU a rank: srun --gpus-per-task=1
		{0, 1, 0, ""},
		{2, 2, 0, "local rank 2, and this process sees 2 devices (0 to 1)"},
	} {
		got, err := LocalDevice(tc.local, tc.devices)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "local rank %d of a host with %d devices", tc.local, tc.devices)
	}
}
