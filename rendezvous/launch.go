package rendezvous

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/gocuda/gocuda/config"
)

// Hosting says who serves the rendezvous at Launch.Addr.
type Hosting int

const (
	// HostedByRankZero: rank 0 listens on Addr (Join starts the server
	// there); every rank, rank 0 included, is a client of it.
	HostedByRankZero Hosting = iota
	// HostedByLauncher: gocuda launch serves it; every rank is a client.
	HostedByLauncher
	// HostedByTorchAgent: torchrun's agent holds a TCPStore at Addr
	// (TORCHELASTIC_USE_AGENT_STORE=True); every rank is a client of it,
	// and only torch's commands are sent there.
	HostedByTorchAgent
)

// String names who serves the rendezvous, as errors say it.
func (h Hosting) String() string {
	switch h {
	case HostedByRankZero:
		return "rank 0"
	case HostedByLauncher:
		return "gocuda launch"
	case HostedByTorchAgent:
		return "torchrun's agent"
	}
	return "Hosting(" + strconv.Itoa(int(h)) + ")"
}

// Launch is what a launcher told this process: its rank, the number of
// ranks, its device on this host and where the ranks meet.
type Launch struct {
	Launcher   string // "gocuda", "torchrun", "openmpi" or "slurm"
	Rank, Size int    // this process's rank and the number of ranks
	LocalRank  int    // the rank on this host: the device ordinal to use
	Addr       string // host:port of the rendezvous
	Job        string // the job's identity: ranks of another job are refused
	Hosting    Hosting
}

// maxSize bounds the world size read from the environment: far above any
// job, low enough that a typo ("40000000") is not taken for one.
const maxSize = 1 << 20

// Variables of the other launchers, as they spell them.
const (
	envMasterAddr = "MASTER_ADDR"
	envMasterPort = "MASTER_PORT"

	envTorchRank       = "RANK"
	envTorchWorldSize  = "WORLD_SIZE"
	envTorchLocalRank  = "LOCAL_RANK"
	envTorchRunID      = "TORCHELASTIC_RUN_ID"
	envTorchRestarts   = "TORCHELASTIC_RESTART_COUNT"
	envTorchAgentStore = "TORCHELASTIC_USE_AGENT_STORE"

	envOMPIRank      = "OMPI_COMM_WORLD_RANK"
	envOMPISize      = "OMPI_COMM_WORLD_SIZE"
	envOMPILocalRank = "OMPI_COMM_WORLD_LOCAL_RANK"
	envOMPIJob       = "OMPI_MCA_ess_base_jobid"
	envPMIxNamespace = "PMIX_NAMESPACE"

	envSlurmProcID  = "SLURM_PROCID"
	envSlurmNTasks  = "SLURM_NTASKS"
	envSlurmNProcs  = "SLURM_NPROCS"
	envSlurmLocalID = "SLURM_LOCALID"
	envSlurmJobID   = "SLURM_JOB_ID"
	envSlurmJobID2  = "SLURM_JOBID"
	envSlurmStepID  = "SLURM_STEP_ID"
	envSlurmStepID2 = "SLURM_STEPID"
)

// FromEnv reads what a launcher set for this process through lookup
// (os.LookupEnv in a program, a map in tests). ok is false, with a nil
// error, when no launcher started this process: it runs alone. When
// several launchers' variables are present the one that started this
// process directly wins: gocuda's own, then torchrun's, Open MPI's and
// Slurm's (mpirun and torchrun often run inside a Slurm allocation, whose
// SLURM_PROCID then is not the rank). A variable set to the empty string
// is unset.
//
// Slurm is recognised inside a job step (srun sets SLURM_STEP_ID): the
// batch script's own shell has SLURM_PROCID=0 as well, and a program it
// runs directly runs alone. MASTER_ADDR, MASTER_PORT, GOCUDA_RENDEZVOUS
// and GOCUDA_JOB alone start nothing: they say where a launched job
// meets, and are read only with a launcher's rank.
//
// An error names the variable, its value and what is accepted; ok is
// LocalDevice is the ordinal of the device a rank of local rank
// localRank uses on a host where the process sees devices devices: its
// local rank, or 0 when it sees one device, because the launcher gave
// each rank its own GPU (srun --gpus-per-task, CUDA_VISIBLE_DEVICES set
// per rank).
func LocalDevice(localRank, devices int) (int, error) {
	switch {
	case localRank < devices:
		return localRank, nil
	case devices == 1:
		return 0, nil
	}
	return 0, fmt.Errorf("rendezvous: local rank %d, and this process sees %d devices (0 to %d): give each rank of a host its own device",
		localRank, devices, devices-1)
}

// true then (a launcher's variables are there, but unusable).
func FromEnv(lookup func(string) (string, bool)) (Launch, bool, error) {
	e := env{lookup}
	var (
		l   Launch
		err error
	)
	switch {
	case e.anySet(config.EnvRank, config.EnvWorldSize, config.EnvLocalRank):
		l, err = fromGocuda(e)
	case e.anySet(envTorchRunID) || e.allSet(envTorchRank, envTorchWorldSize, envMasterAddr, envMasterPort):
		l, err = fromTorchrun(e)
	case e.anySet(envOMPIRank, envOMPISize):
		l, err = fromOpenMPI(e)
	case e.anySet(envSlurmProcID) && e.anySet(envSlurmStepID, envSlurmStepID2):
		l, err = fromSlurm(e)
	default:
		return Launch{}, false, nil
	}
	if err != nil {
		return Launch{}, true, err
	}
	return l, true, nil
}

type env struct{ lookup func(string) (string, bool) }

func (e env) get(name string) (string, bool) {
	v, ok := e.lookup(name)
	v = strings.TrimSpace(v)
	return v, ok && v != ""
}

func (e env) anySet(names ...string) bool {
	for _, n := range names {
		if _, ok := e.get(n); ok {
			return true
		}
	}
	return false
}

func (e env) allSet(names ...string) bool {
	for _, n := range names {
		if _, ok := e.get(n); !ok {
			return false
		}
	}
	return true
}

// first returns the first of names that is set, and its value.
func (e env) first(names ...string) (string, string, bool) {
	for _, n := range names {
		if v, ok := e.get(n); ok {
			return n, v, true
		}
	}
	return names[0], "", false
}

// counts reads a launcher's rank, size and local rank (localDef, when
// >= 0, is the local rank's default; else it is required). who names the
// launcher in errors; the names list its variables in that order.
func (e env) counts(who string, rankVar, sizeVar, localVar []string, localDef int) (rank, size, local int, err error) {
	read := func(names []string, max int, accepted string) (int, bool, error) {
		name, v, ok := e.first(names...)
		if !ok {
			return 0, false, nil
		}
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 0 || n > max {
			return 0, true, fmt.Errorf("rendezvous: %s's variables: %w", who, &config.Error{Var: name, Value: v, Accepted: accepted})
		}
		return n, true, nil
	}
	missing := func(names []string) error {
		var set []string
		for _, group := range [][]string{rankVar, sizeVar, localVar} {
			if n, v, ok := e.first(group...); ok {
				set = append(set, n+"="+v)
			}
		}
		need := []string{rankVar[0], sizeVar[0]}
		if localDef < 0 {
			need = append(need, localVar[0])
		}
		return fmt.Errorf("rendezvous: %s's variables are partly set (%s): %s is missing; a launched rank needs %s",
			who, strings.Join(set, ", "), strings.Join(names, " or "), joinAnd(need))
	}
	size, ok, err := read(sizeVar, maxSize, fmt.Sprintf("a whole number from 1 to %d", maxSize))
	if err != nil {
		return 0, 0, 0, err
	}
	if !ok {
		return 0, 0, 0, missing(sizeVar)
	}
	if size == 0 {
		name, v, _ := e.first(sizeVar...)
		return 0, 0, 0, fmt.Errorf("rendezvous: %s's variables: %w", who, &config.Error{Var: name, Value: v, Accepted: "a whole number from 1 (a job has at least one rank)"})
	}
	ranks := fmt.Sprintf("a whole number from 0 to %d (%s is %d)", size-1, sizeVar[0], size)
	rank, ok, err = read(rankVar, size-1, ranks)
	if err != nil {
		return 0, 0, 0, err
	}
	if !ok {
		return 0, 0, 0, missing(rankVar)
	}
	local, ok, err = read(localVar, size-1, ranks)
	if err != nil {
		return 0, 0, 0, err
	}
	if !ok {
		if localDef < 0 {
			return 0, 0, 0, missing(localVar)
		}
		local = rank
	}
	return rank, size, local, nil
}

func fromGocuda(e env) (Launch, error) {
	rank, size, local, err := e.counts("gocuda launch", []string{config.EnvRank}, []string{config.EnvWorldSize}, []string{config.EnvLocalRank}, 0)
	if err != nil {
		return Launch{}, err
	}
	l := Launch{Launcher: "gocuda", Rank: rank, Size: size, LocalRank: local}
	l.Job, _ = e.get(config.EnvJob)
	if v, ok := e.get(config.EnvRendezvous); ok {
		if l.Addr, err = hostPort(config.EnvRendezvous, v); err != nil {
			return Launch{}, err
		}
		l.Hosting = HostedByLauncher
		return l, nil
	}
	l.Hosting = HostedByRankZero
	l.Addr, err = masterAddr(e, size, fmt.Sprintf("%s=%d and %s=%d are set", config.EnvRank, rank, config.EnvWorldSize, size),
		fmt.Sprintf("set %s=host:port (gocuda launch does), or %s and %s where rank 0 listens", config.EnvRendezvous, envMasterAddr, envMasterPort))
	if err != nil {
		return Launch{}, err
	}
	return l, nil
}

func fromTorchrun(e env) (Launch, error) {
	rank, size, local, err := e.counts("torchrun", []string{envTorchRank}, []string{envTorchWorldSize}, []string{envTorchLocalRank}, -1)
	if err != nil {
		return Launch{}, err
	}
	l := Launch{Launcher: "torchrun", Rank: rank, Size: size, LocalRank: local, Hosting: HostedByRankZero}
	if id, ok := e.get(envTorchRunID); ok {
		// A restarted attempt must never meet the keys of the one before.
		restarts, ok := e.get(envTorchRestarts)
		if !ok {
			restarts = "0"
		}
		l.Job = id + "/" + restarts
	}
	if v, ok := e.get(envTorchAgentStore); ok {
		if b, err := config.ParseBool(v); err == nil && b {
			// The agent's TCPStore holds MASTER_PORT: binding it from a
			// worker fails with EADDRINUSE, so every rank is its client.
			l.Hosting = HostedByTorchAgent
		}
	}
	l.Addr, err = masterAddr(e, 0, fmt.Sprintf("torchrun started this process as rank %d of %d", rank, size),
		"torchrun sets MASTER_ADDR and MASTER_PORT: run the program under torchrun --no-python, unchanged")
	return l, err
}

func fromOpenMPI(e env) (Launch, error) {
	rank, size, local, err := e.counts("mpirun", []string{envOMPIRank}, []string{envOMPISize}, []string{envOMPILocalRank}, -1)
	if err != nil {
		return Launch{}, err
	}
	l := Launch{Launcher: "openmpi", Rank: rank, Size: size, LocalRank: local, Hosting: HostedByRankZero}
	_, l.Job, _ = e.first(envOMPIJob, envPMIxNamespace)
	l.Addr, err = rankZeroAddr(e, size, fmt.Sprintf("mpirun started this process as rank %d of %d", rank, size),
		"export MASTER_ADDR and MASTER_PORT (or GOCUDA_RENDEZVOUS=host:port) in the job script and pass them on with mpirun -x MASTER_ADDR -x MASTER_PORT")
	return l, err
}

func fromSlurm(e env) (Launch, error) {
	rank, size, local, err := e.counts("srun", []string{envSlurmProcID}, []string{envSlurmNTasks, envSlurmNProcs}, []string{envSlurmLocalID}, -1)
	if err != nil {
		return Launch{}, err
	}
	l := Launch{Launcher: "slurm", Rank: rank, Size: size, LocalRank: local, Hosting: HostedByRankZero}
	_, job, _ := e.first(envSlurmJobID, envSlurmJobID2)
	_, step, _ := e.first(envSlurmStepID, envSlurmStepID2)
	l.Job = job + "." + step
	l.Addr, err = rankZeroAddr(e, size, fmt.Sprintf("srun started this process as rank %d of %d", rank, size),
		"export MASTER_ADDR and MASTER_PORT (or GOCUDA_RENDEZVOUS=host:port) in the job script")
	return l, err
}

// rankZeroAddr is where rank 0 listens under a launcher that gives no
// address: GOCUDA_RENDEZVOUS, else MASTER_ADDR and MASTER_PORT.
func rankZeroAddr(e env, size int, started, fix string) (string, error) {
	if v, ok := e.get(config.EnvRendezvous); ok {
		return hostPort(config.EnvRendezvous, v)
	}
	return masterAddr(e, size, started, fix)
}

// masterAddr reads MASTER_ADDR and MASTER_PORT. A job of one rank
// (size 1) needs none: rank 0 listens on a free loopback port.
func masterAddr(e env, size int, started, fix string) (string, error) {
	a, aok := e.get(envMasterAddr)
	p, pok := e.get(envMasterPort)
	switch {
	case aok && pok:
		port, err := parsePort(envMasterPort, p)
		if err != nil {
			return "", err
		}
		return net.JoinHostPort(a, strconv.Itoa(port)), nil
	case aok:
		return "", fmt.Errorf("rendezvous: %s=%s is set but %s is not: %s", envMasterAddr, a, envMasterPort, fix)
	case pok:
		return "", fmt.Errorf("rendezvous: %s=%s is set but %s is not: %s", envMasterPort, p, envMasterAddr, fix)
	case size == 1:
		return "127.0.0.1:0", nil
	}
	return "", fmt.Errorf("rendezvous: %s, but nothing says where rank 0 listens: %s", started, fix)
}

func hostPort(name, v string) (string, error) {
	accepted := `host:port, as "10.0.0.1:29500", "host0:29500" or "[fe80::1]:29500"`
	host, p, err := net.SplitHostPort(v)
	if err != nil {
		return "", fmt.Errorf("rendezvous: %w", &config.Error{Var: name, Value: v, Accepted: accepted, Err: err})
	}
	if host == "" {
		return "", fmt.Errorf("rendezvous: %w", &config.Error{Var: name, Value: v, Accepted: accepted + " (the host cannot be empty: name the machine that serves it)"})
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 {
		return "", fmt.Errorf("rendezvous: %w", &config.Error{Var: name, Value: v, Accepted: accepted + " (the port from 1 to 65535)"})
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

func parsePort(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("rendezvous: %w", &config.Error{Var: name, Value: v, Accepted: "a port number from 1 to 65535"})
	}
	return n, nil
}

// joinAnd writes a list as "a", "a and b" or "a, b and c".
func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
