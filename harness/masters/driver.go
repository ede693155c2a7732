package masters

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/oplogha/oplogha/harness/client"
)

// Settings are what the harness decided for one node before its first
// start: its addresses, its etcd endpoints (its own links to each member)
// and the project's config keys the run gives every node (a driver of a
// master that takes none ignores them: a scenario that sets them requires
// project-config and never runs against it).
type Settings struct {
	ClusterID     string
	Listen        string // client API host:port the node listens on
	EtcdEndpoints []string
	Config        map[string]any
}

// Driver is how the harness starts, observes and drives one kind of
// master: one implementation per kind (this package's Reference, the
// mooncake package's for upstream's master). Scenarios and audits never see
// it; they see the capabilities of the kind (masterkind).
type Driver interface {
	// Prepare readies node n before its first start (its config file, its
	// extra ports).
	Prepare(n *Node, s Settings) error
	// Command is the arguments and extra environment n starts with.
	Command(n *Node) (args, env []string)
	// Health is the node's health in the harness's terms.
	Health(ctx context.Context, n *Node) (client.Health, error)
	// State is the node's applied state (with the dump when dump is set);
	// ErrNotExposed for a master that exposes none.
	State(ctx context.Context, n *Node, dump bool) (client.State, error)
	// MetricsURL is where n's Prometheus metrics are read.
	MetricsURL(n *Node) string
	// Failpoint sets (term) or clears ("") the failpoint the scenario calls
	// name on n; FailpointHits says how often it fired since it was set.
	Failpoint(ctx context.Context, n *Node, name, term string) error
	FailpointHits(ctx context.Context, n *Node, name string) (int, error)
	// StartFailpoints are failpoints set at every start of n (the
	// scenario's cluster.failpoints), as environment.
	StartFailpoints(n *Node, fps map[string]string) ([]string, error)
}

// ErrNotExposed: the master does not expose what was asked (its kind lacks
// the capability).
var ErrNotExposed = errors.New("not exposed by this master kind")

// Reference drives the project's reference master: a YAML config file per
// node, the client API over HTTP JSON (impl/master/CONTRACT.md) and gofail
// failpoints over HTTP.
type Reference struct {
	HTTP *client.Client
}

var _ Driver = (*Reference)(nil)

// Prepare writes n's config file.
func (d *Reference) Prepare(n *Node, s Settings) error {
	cfg := map[string]any{
		"cluster_id":     s.ClusterID,
		"node_id":        n.Name,
		"listen":         s.Listen,
		"advertise_url":  n.URL,
		"etcd_endpoints": s.EtcdEndpoints,
		"environment":    "development",
	}
	for k, v := range s.Config {
		cfg[k] = v
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(n.ConfigPath, data, 0o644)
}

// Command starts the master on its config file with gofail's HTTP endpoint.
func (d *Reference) Command(n *Node) ([]string, []string) {
	return []string{"--config", n.ConfigPath}, []string{"GOFAIL_HTTP=" + n.FailpointAddr}
}

// StartFailpoints is GOFAIL_FAILPOINTS.
func (d *Reference) StartFailpoints(_ *Node, fps map[string]string) ([]string, error) {
	if len(fps) == 0 {
		return nil, nil
	}
	var parts []string
	for k, v := range fps {
		parts = append(parts, k+"="+v)
	}
	return []string{"GOFAIL_FAILPOINTS=" + strings.Join(parts, ";")}, nil
}

// Health reads /healthz.
func (d *Reference) Health(ctx context.Context, n *Node) (client.Health, error) {
	return d.HTTP.Health(ctx, n.DirectURL)
}

// State reads /v1/state.
func (d *Reference) State(ctx context.Context, n *Node, dump bool) (client.State, error) {
	return d.HTTP.State(ctx, n.DirectURL, dump)
}

// MetricsURL is /metrics on the client API.
func (d *Reference) MetricsURL(n *Node) string { return n.DirectURL + "/metrics" }

// Failpoint sets or clears a failpoint over the master's GOFAIL_HTTP endpoint.
func (d *Reference) Failpoint(ctx context.Context, n *Node, name, term string) error {
	method, body := http.MethodPut, term
	if term == "" {
		method = http.MethodDelete
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+n.FailpointAddr+"/"+name, bytes.NewReader([]byte(body)))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("failpoint %s on %s: %w", name, n.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if term == "" && (resp.StatusCode == http.StatusNotFound || strings.Contains(string(b), "disabled")) {
			return nil // nothing set: a restart since (or a 1* term that ran out) cleared it
		}
		return fmt.Errorf("failpoint %s=%q on %s: %s: %s", name, term, n.Name, resp.Status, strings.TrimSpace(string(b)))
	}
	return nil
}

// FailpointHits is gofail's count of the failpoint's term.
func (d *Reference) FailpointHits(ctx context.Context, n *Node, name string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.FailpointAddr+"/"+name+"/count", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("failpoint %s count on %s: %w", name, n.Name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode == http.StatusOK:
		return strconv.Atoi(strings.TrimSpace(string(b)))
	case resp.StatusCode == http.StatusNotFound:
		return 0, fmt.Errorf("failpoint %s: no such failpoint on %s", name, n.Name)
	case strings.Contains(string(b), "disabled"):
		return 0, nil
	}
	return 0, fmt.Errorf("failpoint %s count on %s: %s: %s", name, n.Name, resp.Status, strings.TrimSpace(string(b)))
}
