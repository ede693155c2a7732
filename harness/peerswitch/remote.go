package peerswitch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/oplogha/oplogha/harness/ports"
	"github.com/oplogha/oplogha/harness/proc"
)

// Remote drives a peer switch process through its control API. Every call
// has a deadline: the harness never waits on what it runs.
type Remote struct {
	API  string // host:port of the control API
	host string // the switch's address, where its member proxies listen
	cli  *http.Client
}

// CallTimeout bounds one control call.
const CallTimeout = 5 * time.Second

// Start runs the peer switch binary in group as the node "peerswitch" (a
// local process, or a container on the docker runtime) and waits until
// its control API answers.
func Start(ctx context.Context, group *proc.Group, binary, logDir string) (*Remote, error) {
	ps, err := ports.Free(1)
	if err != nil {
		return nil, err
	}
	host := group.Host("peerswitch")
	api := ports.On(host, ps[0])
	if _, err := group.Start(proc.Spec{Name: "peerswitch", Path: binary, Log: filepath.Join(logDir, "peerswitch.log"), Dir: logDir,
		Args: []string{"-listen", api}}); err != nil {
		return nil, err
	}
	r := &Remote{API: api, host: host, cli: &http.Client{Timeout: CallTimeout}}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := r.Cuts(ctx); err == nil {
			return r, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("peer switch API %s not answering", api)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Add puts a proxy for member name in front of target (host:port) on a
// port of the switch's own address, and returns the address to advertise.
func (r *Remote) Add(ctx context.Context, name, target string) (string, error) {
	ps, err := ports.Free(1)
	if err != nil {
		return "", err
	}
	var out struct {
		Listen string `json:"listen"`
	}
	if err := r.call(ctx, http.MethodPost, "/members", memberRequest{Name: name, Listen: ports.On(r.host, ps[0]), Target: target}, &out); err != nil {
		return "", fmt.Errorf("peer switch: add %s: %w", name, err)
	}
	return out.Listen, nil
}

// Cut drops every raft message from → to (Switch.Cut).
func (r *Remote) Cut(ctx context.Context, from, to string) error {
	return r.call(ctx, http.MethodPost, "/cut", pairRequest{From: from, To: to}, nil)
}

// Restore lets messages from → to pass again.
func (r *Remote) Restore(ctx context.Context, from, to string) error {
	return r.call(ctx, http.MethodPost, "/restore", pairRequest{From: from, To: to}, nil)
}

// Cuts lists the directions cut now.
func (r *Remote) Cuts(ctx context.Context) ([]string, error) {
	var out []string
	err := r.call(ctx, http.MethodGet, "/cuts", nil, &out)
	return out, err
}

func (r *Remote) call(ctx context.Context, method, path string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	var buf bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&buf).Encode(body); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+r.API+path, &buf)
	if err != nil {
		return err
	}
	resp, err := r.cli.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode == http.StatusNotFound {
			return fmt.Errorf("%w: %s", ErrUnknownMember, e.Error)
		}
		return fmt.Errorf("peer switch %s %s: %s: %s", method, path, resp.Status, e.Error)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
