// Package mooncake runs upstream's C++ mooncake_master under the suite, as
// the mooncake master kind (harness/masterkind): how a node starts (its
// gflags), how the harness reads its health (the /health endpoint of its
// metrics port), how a scenario's failpoints map onto upstream's
// file-based test failpoints, and the load's coro_rpc client (client.go).
// Nothing of upstream is in this package: the binary is the user's
// (MOONCAKE_MASTER), the wire format is impl/contract/cororpc's.
package mooncake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/masters"
	"github.com/oplogha/oplogha/harness/proc"
)

// Driver drives upstream's master. A node's second port (Node.FailpointAddr)
// is its metrics port, where /health, /role and /metrics answer; its
// failpoints live in a directory of its own (MOONCAKE_TEST_FAILPOINT_DIR).
type Driver struct {
	Binary string
	Group  *proc.Group
	// Flags are extra gflags for every node (MOONCAKE_MASTER_FLAGS).
	Flags []string
	HTTP  *http.Client

	mu    sync.Mutex
	nodes map[string]*nodeState
}

type nodeState struct {
	args   []string
	fpDir  string
	hits   map[string]int           // own failpoint name → hits seen since armed
	crash  map[string]chan struct{} // own name → stops the crash watcher
	health string                   // metrics host:port
}

var _ masters.Driver = (*Driver)(nil)

// NewDriver drives binary, whose nodes run in group.
func NewDriver(binary string, group *proc.Group, flags []string) *Driver {
	return &Driver{Binary: binary, Group: group, Flags: flags, HTTP: &http.Client{Timeout: 2 * time.Second},
		nodes: map[string]*nodeState{}}
}

// FailpointTimeout is how long upstream's failpoint holds before giving up
// by itself (MOONCAKE_TEST_FAILPOINT_TIMEOUT_SEC, its maximum): a hold
// ends when the scenario heals it, not before.
const FailpointTimeout = 3600

// Prepare records n's gflags and makes its failpoint directory.
func (d *Driver) Prepare(n *masters.Node, s masters.Settings) error {
	host, port, ok := strings.Cut(s.Listen, ":")
	if !ok {
		return fmt.Errorf("listen %q: want host:port", s.Listen)
	}
	mhost, mport, ok := strings.Cut(n.FailpointAddr, ":")
	if !ok {
		return fmt.Errorf("metrics address %q: want host:port", n.FailpointAddr)
	}
	eps := strings.Join(s.EtcdEndpoints, ";")
	args := []string{
		"--enable_ha=true", "--ha_backend_type=etcd",
		"--ha_backend_connstring=" + eps, "--etcd_endpoints=" + eps,
		"--cluster_id=" + s.ClusterID,
		"--enable_oplog=true", "--oplog_batch_max_entries=1024", "--batch_oplog_retry_timeout_sec=180",
		"--rpc_address=" + host, "--rpc_port=" + port,
		"--metrics_host=" + mhost, "--metrics_port=" + mport,
		"--enable_http_metadata_server=false", "--logtostderr=true",
	}
	args = append(args, d.Flags...)
	dir := strings.TrimSuffix(n.ConfigPath, filepath.Ext(n.ConfigPath)) + ".failpoints"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The command line is the node's whole configuration: kept beside the
	// logs, as the reference master's config file is.
	if err := os.WriteFile(n.ConfigPath, []byte(strings.Join(args, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nodes[n.Name] = &nodeState{args: args, fpDir: dir, hits: map[string]int{}, crash: map[string]chan struct{}{},
		health: n.FailpointAddr}
	return nil
}

func (d *Driver) node(n *masters.Node) (*nodeState, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st, ok := d.nodes[n.Name]
	if !ok {
		return nil, fmt.Errorf("mooncake: node %s was not prepared", n.Name)
	}
	return st, nil
}

// Command is the node's gflags; its libraries are looked up beside the binary too.
func (d *Driver) Command(n *masters.Node) ([]string, []string) {
	st, err := d.node(n)
	if err != nil {
		return nil, nil
	}
	lib := filepath.Dir(d.Binary)
	if cur := os.Getenv("LD_LIBRARY_PATH"); cur != "" {
		lib += ":" + cur
	}
	return st.args, []string{"MOONCAKE_TEST_FAILPOINT_DIR=" + st.fpDir,
		"MOONCAKE_TEST_FAILPOINT_TIMEOUT_SEC=" + strconv.Itoa(FailpointTimeout), "LD_LIBRARY_PATH=" + lib}
}

// healthBody is upstream's /health answer.
type healthBody struct {
	Status        string  `json:"status"`
	Role          string  `json:"role"`     // leader | standby
	HAState       string  `json:"ha_state"` // starting … leader_warmup, serving
	ServiceReady  bool    `json:"service_ready"`
	LeaderAddress *string `json:"leader_address"`
	ViewVersion   *uint64 `json:"view_version"`
}

// HealthFrom maps upstream's /health to the harness's: a leader that
// serves is the serving primary, a leader in warmup a primary not yet
// serving, a node starting is starting, anything else a standby.
func HealthFrom(name string, b healthBody) client.Health {
	h := client.Health{NodeID: name, Role: "standby"}
	switch {
	case b.Role == "leader":
		h.Role = "primary"
		h.Serving = b.HAState == "serving" && b.ServiceReady
	case b.HAState == "starting":
		h.Role = "starting"
	}
	if b.LeaderAddress != nil {
		h.Leader = *b.LeaderAddress
	}
	if b.ViewVersion != nil {
		h.ProducerView = *b.ViewVersion
	}
	return h
}

// Health reads /health on the metrics port; the incarnation is the
// process's PID (a restart changes it).
func (d *Driver) Health(ctx context.Context, n *masters.Node) (client.Health, error) {
	st, err := d.node(n)
	if err != nil {
		return client.Health{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+st.health+"/health", nil)
	if err != nil {
		return client.Health{}, err
	}
	resp, err := d.HTTP.Do(req)
	if err != nil {
		return client.Health{}, err
	}
	defer resp.Body.Close()
	var b healthBody
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil {
		return client.Health{}, fmt.Errorf("%s /health: %w", n.Name, err)
	}
	h := HealthFrom(n.Name, b)
	if p, ok := d.Group.Get(n.Name); ok {
		h.Incarnation = strconv.Itoa(p.PID)
	}
	return h, nil
}

// State: upstream's master exposes no state digest or dump.
func (d *Driver) State(context.Context, *masters.Node, bool) (client.State, error) {
	return client.State{}, masters.ErrNotExposed
}

// MetricsURL is /metrics on the metrics port.
func (d *Driver) MetricsURL(n *masters.Node) string { return "http://" + n.FailpointAddr + "/metrics" }

// FlagsEnv names extra gflags for every node, space-separated.
const FlagsEnv = "MOONCAKE_MASTER_FLAGS"

// FlagsFromEnv reads MOONCAKE_MASTER_FLAGS.
func FlagsFromEnv() []string { return strings.Fields(os.Getenv(FlagsEnv)) }
