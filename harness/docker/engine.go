// Package docker is the harness's docker runtime underneath proc: every
// etcd member, the toxiproxy, the S3 server and every master runs as a
// container, through testcontainers-go, on a private network made for the
// run, each at an address of its own. The containers run images built
// locally FROM scratch around the same static binaries the process runtime
// runs (images.go); nothing is pulled unless asked. The run's directory is
// bound into every container at the same path, so configuration files,
// data directories and the S3 server's files keep the paths the harness
// knows. The Ryuk reaper is off: the harness removes what it made itself
// (Close), and removes what a crashed harness left (Reap).
//
// A container's process is a process of this host: the harness signals its
// PID as it signals a child's (kill, stop), so every fault means the same
// on both runtimes; docker adds freezing a container (pause) and cutting it
// off the network (Disconnect), which only a container can have.
package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"

	"github.com/oplogha/oplogha/harness/proc"
)

// Labels every object of a run carries.
const (
	LabelRun        = "oplogha.run"
	LabelHarnessPID = "oplogha.harness-pid"
)

// ErrNoEngine: no Docker engine answers.
var ErrNoEngine = errors.New("no Docker engine answers")

func init() {
	// The reaper (Ryuk) is an image this machine cannot pull, and the
	// harness cleans up by itself; a user who wants it sets the variable.
	if _, ok := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); !ok {
		_ = os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	// testcontainers-go prints a banner through its process-wide logger
	// whatever logger a request names; the engine's messages go to the
	// run's docker.log instead (Options.Log). OPLOGHA_DOCKER_VERBOSE=1
	// keeps the library's own output.
	if os.Getenv("OPLOGHA_DOCKER_VERBOSE") == "" {
		tclog.SetDefault(tclog.NewNoopLogger())
	}
}

// Available pings the engine, in one line when it does not answer.
func Available(ctx context.Context) error {
	p, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(logger{}))
	if err != nil {
		return fmt.Errorf("%w: %v (the process runtime needs none: drop --runtime docker)", ErrNoEngine, err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := p.Client().Ping(ctx, client.PingOptions{}); err != nil {
		return fmt.Errorf("%w: %v (the process runtime needs none: drop --runtime docker)", ErrNoEngine, firstLine(err))
	}
	return nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// Options shape an engine.
type Options struct {
	// RunID names the network and prefixes container names; unique per run.
	RunID string
	// Mounts are host directories bound at the same path in every container.
	Mounts []string
	// Images maps a binary path (proc.Spec.Path) to the image that runs it.
	Images map[string]Image
	// RemoveImages are tags made for this run only, removed by Close.
	RemoveImages []string
	// Log receives testcontainers-go's own messages (nil: dropped).
	Log io.Writer
}

// logger writes testcontainers-go's messages to w, or nowhere.
type logger struct{ w io.Writer }

func (l logger) Printf(format string, v ...any) {
	if l.w != nil {
		fmt.Fprintf(l.w, format+"\n", v...)
	}
}

// Image is what runs one binary: a locally built image (its entrypoint is
// the binary) or a public one whose Entrypoint says where the program is.
type Image struct {
	Ref        string
	Entrypoint []string
}

// Engine runs one run's containers.
type Engine struct {
	opts     Options
	provider *testcontainers.DockerProvider
	cli      client.APIClient
	net      *testcontainers.DockerNetwork
	prefix   netip.Prefix

	mu    sync.Mutex
	ips   map[string]netip.Addr
	next  netip.Addr
	cur   map[string]*instance // the current incarnation of each node
	all   []*instance
	cut   map[string]bool // disconnected from the network
	close bool
}

var _ proc.Launcher = (*Engine)(nil)

// New makes the run's network (a free /24 of 10.0.0.0/8) and an engine on it.
func New(ctx context.Context, opts Options) (*Engine, error) {
	if err := Available(ctx); err != nil {
		return nil, err
	}
	p, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(logger{opts.Log}))
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	e := &Engine{opts: opts, provider: p, cli: p.Client(), ips: map[string]netip.Addr{}, cur: map[string]*instance{}, cut: map[string]bool{}}
	if n, err := reap(ctx, e.cli); err != nil {
		logger{opts.Log}.Printf("reap: %v", err)
	} else if n > 0 {
		logger{opts.Log}.Printf("reaped %d containers and networks of runs whose harness is gone", n)
	}
	labels := map[string]string{LabelRun: opts.RunID, LabelHarnessPID: strconv.Itoa(os.Getpid())}
	var lastErr error
	for try := 0; try < 8; try++ {
		prefix := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(200 + rand.IntN(50)), byte(rand.IntN(256)), 0}), 24)
		n, err := tcnetwork.New(ctx, tcnetwork.WithLabels(labels), tcnetwork.WithIPAM(&network.IPAM{
			Config: []network.IPAMConfig{{Subnet: prefix, Gateway: prefix.Addr().Next()}},
		}))
		if err != nil {
			lastErr = err
			continue // most likely a subnet in use: draw another
		}
		e.net, e.prefix = n, prefix
		// .1 is the gateway (this host); nodes take .10 onwards.
		e.next = prefix.Addr()
		for i := 0; i < 10; i++ {
			e.next = e.next.Next()
		}
		return e, nil
	}
	p.Close()
	return nil, fmt.Errorf("docker: create the run's network: %w", lastErr)
}

// Network is the run's network name.
func (e *Engine) Network() string { return e.net.Name }

// Host is the node's address on the run's network, the same for every
// incarnation of the node.
func (e *Engine) Host(name string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.addr(name).String()
}

func (e *Engine) addr(name string) netip.Addr {
	if a, ok := e.ips[name]; ok {
		return a
	}
	a := e.next
	e.next = e.next.Next()
	e.ips[name] = a
	return a
}

// Launch starts one incarnation of spec as a container named
// {run}-{name}, its previous incarnation's container removed first.
func (e *Engine) Launch(spec proc.Spec) (proc.Instance, error) {
	img, ok := e.opts.Images[spec.Path]
	image := img.Ref
	if !ok {
		return nil, fmt.Errorf("docker: no image for %s", spec.Path)
	}
	e.mu.Lock()
	if e.close {
		e.mu.Unlock()
		return nil, errors.New("docker: engine closed")
	}
	ip := e.addr(spec.Name)
	prev := e.cur[spec.Name]
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if prev != nil {
		if err := prev.remove(ctx); err != nil {
			return nil, err
		}
	}
	env := map[string]string{}
	for _, kv := range spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	binds := make([]string, 0, len(e.opts.Mounts))
	for _, m := range e.opts.Mounts {
		binds = append(binds, m+":"+m)
	}
	netName := e.net.Name
	req := testcontainers.ContainerRequest{
		Image:      image,
		Entrypoint: img.Entrypoint,
		Cmd:        spec.Args,
		Env:        env,
		Name:       e.opts.RunID + "-" + spec.Name,
		Labels:     map[string]string{LabelRun: e.opts.RunID, LabelHarnessPID: strconv.Itoa(os.Getpid())},
		ConfigModifier: func(c *container.Config) {
			c.WorkingDir = spec.Dir
			c.Hostname = spec.Name
		},
		HostConfigModifier: func(h *container.HostConfig) {
			h.Binds = binds
		},
		Networks:       []string{netName},
		NetworkAliases: map[string][]string{netName: {spec.Name}},
		EndpointSettingsModifier: func(m map[string]*network.EndpointSettings) {
			if es, ok := m[netName]; ok {
				es.IPAMConfig = &network.EndpointIPAMConfig{IPv4Address: ip}
			}
		},
	}
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true, Logger: logger{e.opts.Log}})
	if err != nil {
		if c != nil {
			_ = c.Terminate(ctx)
		}
		return nil, fmt.Errorf("docker: start %s (%s): %w", spec.Name, image, err)
	}
	dc := c.(*testcontainers.DockerContainer)
	in, err := e.cli.ContainerInspect(ctx, dc.GetContainerID(), client.ContainerInspectOptions{})
	if err != nil {
		_ = c.Terminate(ctx)
		return nil, fmt.Errorf("docker: inspect %s: %w", spec.Name, err)
	}
	st := in.Container.State
	inst := &instance{e: e, c: dc, name: spec.Name, pid: st.Pid, done: make(chan struct{})}
	if st.Pid == 0 || !st.Running {
		// It exited at once: keep its output and report it as exited.
		inst.pid = 0
	}
	if err := inst.follow(spec.Log); err != nil {
		_ = c.Terminate(ctx)
		return nil, err
	}
	e.mu.Lock()
	e.cur[spec.Name] = inst
	e.all = append(e.all, inst)
	e.mu.Unlock()
	return inst, nil
}

// Disconnect cuts a node off the run's network: a real partition, its own
// address unreachable from every other node and from the harness.
func (e *Engine) Disconnect(ctx context.Context, name string) error {
	e.mu.Lock()
	inst := e.cur[name]
	e.mu.Unlock()
	if inst == nil {
		return fmt.Errorf("docker: no container %s", name)
	}
	if _, err := e.cli.NetworkDisconnect(ctx, e.net.ID, client.NetworkDisconnectOptions{Container: inst.c.GetContainerID(), Force: true}); err != nil {
		return fmt.Errorf("docker: disconnect %s: %w", name, err)
	}
	e.mu.Lock()
	e.cut[name] = true
	e.mu.Unlock()
	return nil
}

// Reconnect puts a node back on the network at its address.
func (e *Engine) Reconnect(ctx context.Context, name string) error {
	e.mu.Lock()
	inst, ip := e.cur[name], e.addr(name)
	e.mu.Unlock()
	if inst == nil {
		return fmt.Errorf("docker: no container %s", name)
	}
	_, err := e.cli.NetworkConnect(ctx, e.net.ID, client.NetworkConnectOptions{Container: inst.c.GetContainerID(),
		EndpointConfig: &network.EndpointSettings{IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: ip}, Aliases: []string{name}}})
	if err != nil {
		return fmt.Errorf("docker: reconnect %s: %w", name, err)
	}
	e.mu.Lock()
	delete(e.cut, name)
	e.mu.Unlock()
	return nil
}

// Close removes every container, the network and the run's own images.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	e.close = true
	all := append([]*instance(nil), e.all...)
	e.mu.Unlock()
	var errs []error
	for _, in := range all {
		errs = append(errs, in.remove(ctx))
	}
	if e.net != nil {
		if err := e.net.Remove(ctx); err != nil {
			errs = append(errs, fmt.Errorf("docker: remove network %s: %w", e.net.Name, err))
		}
	}
	for _, tag := range e.opts.RemoveImages {
		if _, err := e.cli.ImageRemove(ctx, tag, client.ImageRemoveOptions{Force: true, PruneChildren: true}); err != nil {
			errs = append(errs, fmt.Errorf("docker: remove image %s: %w", tag, err))
		}
	}
	errs = append(errs, e.provider.Close())
	if c, ok := e.opts.Log.(io.Closer); ok {
		_ = c.Close()
	}
	return errors.Join(errs...)
}

// instance is one container incarnation.
type instance struct {
	e    *Engine
	c    *testcontainers.DockerContainer
	name string
	pid  int
	done chan struct{} // closed when its output has been copied out

	removed bool
	mu      sync.Mutex
}

func (in *instance) PID() int { return in.pid }

// Wait returns once the container is not running.
func (in *instance) Wait() error {
	if in.pid == 0 {
		<-in.done
		return errors.New("exited at start")
	}
	r := in.e.cli.ContainerWait(context.Background(), in.c.GetContainerID(), client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case res := <-r.Result:
		<-in.done
		if res.StatusCode != 0 {
			return fmt.Errorf("exit status %d", res.StatusCode)
		}
		return nil
	case err := <-r.Error:
		<-in.done
		return err
	}
}

func (in *instance) Pause() error {
	_, err := in.e.cli.ContainerPause(context.Background(), in.c.GetContainerID(), client.ContainerPauseOptions{})
	return err
}

func (in *instance) Resume() error {
	_, err := in.e.cli.ContainerUnpause(context.Background(), in.c.GetContainerID(), client.ContainerUnpauseOptions{})
	return err
}

// follow appends the container's stdout and stderr to the log file until
// it stops.
func (in *instance) follow(log string) error {
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	rc, err := in.e.cli.ContainerLogs(context.Background(), in.c.GetContainerID(), client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: true})
	if err != nil {
		f.Close()
		return fmt.Errorf("docker: logs of %s: %w", in.name, err)
	}
	go func() {
		defer close(in.done)
		defer f.Close()
		defer rc.Close()
		_, _ = stdcopy.StdCopy(f, f, rc)
	}()
	return nil
}

// remove kills (if it still runs) and removes the container; its output has
// been copied out first.
func (in *instance) remove(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.removed {
		return nil
	}
	_ = in.Resume() // a frozen container cannot be killed cleanly
	id := in.c.GetContainerID()
	if _, err := in.e.cli.ContainerRemove(ctx, id,
		client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !strings.Contains(err.Error(), "No such container") {
		return fmt.Errorf("docker: remove %s: %w", in.name, err)
	}
	select {
	case <-in.done:
	case <-time.After(5 * time.Second):
	}
	in.removed = true
	return nil
}

// reap removes the containers and networks of runs whose harness process
// is gone (killed before its Close): what Ryuk would have done.
func reap(ctx context.Context, cli client.APIClient) (int, error) {
	f := client.Filters{}.Add("label", LabelHarnessPID)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range cs.Items {
		if harnessAlive(c.Labels[LabelHarnessPID]) {
			continue
		}
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err == nil {
			n++
		}
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return n, err
	}
	for _, nw := range ns.Items {
		if harnessAlive(nw.Labels[LabelHarnessPID]) {
			continue
		}
		if _, err := cli.NetworkRemove(ctx, nw.ID, client.NetworkRemoveOptions{}); err == nil {
			n++
		}
	}
	return n, nil
}

// harnessAlive: the labelled harness PID is a running process.
func harnessAlive(label string) bool {
	pid, err := strconv.Atoi(label)
	if err != nil || pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}
