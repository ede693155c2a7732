// Package client speaks a master's client API (impl/master/CONTRACT.md) from
// the outside, as any harness or adapter would: it decodes the documented JSON
// and never imports the master's code.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"time"
)

// Outcomes of a mutation.
const (
	OK      = "ok"
	Failed  = "failed"
	Unknown = "unknown"
)

// Result is the answer to a mutation. A transport error (no answer) is
// reported as Outcome Unknown with Code "transport".
type Result struct {
	Outcome string `json:"outcome"`
	BatchID uint64 `json:"batch_id,omitempty"`
	Seq     uint64 `json:"seq,omitempty"`
	Code    string `json:"code,omitempty"`
	Error   string `json:"error,omitempty"`
	Leader  string `json:"leader,omitempty"`
	Status  int    `json:"-"`
}

// Cursor is an applied batch cursor.
type Cursor struct {
	BatchID uint64 `json:"batch_id"`
	Seq     uint64 `json:"seq"`
}

// Health is GET /healthz.
type Health struct {
	NodeID         string `json:"node_id"`
	Role           string `json:"role"`
	Serving        bool   `json:"serving"`
	RoleGeneration uint64 `json:"role_generation"`
	Cursor         Cursor `json:"cursor"`
	DurablePrefix  uint64 `json:"durable_prefix_batch_id"`
	ProducerView   uint64 `json:"producer_view"`
	Leader         string `json:"leader"`
	Bootstrap      struct {
		Source       string `json:"source"`
		DurationMS   int64  `json:"duration_ms"`
		Error        string `json:"error"`
		LegacyImport string `json:"legacy_import"`
	} `json:"bootstrap"`
	ApplyError  string `json:"apply_error"`
	Incarnation string `json:"incarnation"` // changes when the process restarts
	// Promotable is false while the node may not campaign (nil: a master
	// that does not say).
	Promotable *bool `json:"promotable,omitempty"`
}

// Replica is a replica descriptor: upstream's Replica::Descriptor,
// flattened (the master's CONTRACT.md says which fields each kind uses).
type Replica struct {
	ID          uint64 `json:"id"`
	Kind        string `json:"kind"` // memory, nof, disk, local_disk, dfs
	Segment     string `json:"segment,omitempty"`
	Offset      uint64 `json:"offset,omitempty"`
	Length      uint64 `json:"length"`
	Status      string `json:"status"`
	Protocol    string `json:"protocol,omitempty"`
	FilePath    string `json:"file_path,omitempty"`
	ClientID    string `json:"client_id,omitempty"` // local_disk: "<first>-<second>"
	AlignedSize uint64 `json:"aligned_size,omitempty"`
	ShardIdx    int32  `json:"shard_idx,omitempty"`
}

// Object is an object's metadata. ClientID is upstream's UUID as text,
// "<first>-<second>" in decimal.
type Object struct {
	ClientID   string    `json:"client_id"`
	Size       uint64    `json:"size"`
	Replicas   []Replica `json:"replicas"`
	GroupID    string    `json:"group_id,omitempty"`
	DataType   uint32    `json:"data_type,omitempty"`
	HardPinned bool      `json:"hard_pinned,omitempty"`
	// HardPinnedUnset: hard_pinned has no value (upstream's nullopt): an
	// object stored from an empty or undecodable PUT_END payload.
	HardPinnedUnset bool `json:"hard_pinned_unset,omitempty"`
}

// Segment is a segment registry entry.
type Segment struct {
	Endpoint string `json:"endpoint"`
	Name     string `json:"name"`
	Capacity uint64 `json:"capacity"`
	Kind     string `json:"kind"`
	FilePath string `json:"file_path,omitempty"`
}

// DumpedObject is one entry of a state dump.
type DumpedObject struct {
	Tenant string `json:"tenant"`
	Key    string `json:"key"`
	Object Object `json:"object"`
}

// State is GET /v1/state.
type State struct {
	Role     string         `json:"role"`
	Cursor   Cursor         `json:"cursor"`
	Digest   string         `json:"digest"`
	Objects  int            `json:"objects"`
	Segments int            `json:"segments"`
	Dump     []DumpedObject `json:"dump"`
	SegDump  []Segment      `json:"segment_dump"`
}

// PutRequest is POST /v1/objects/put. ClientID is "<first>-<second>" (""
// is 0-0); without Replicas the master places memory replicas.
type PutRequest struct {
	Tenant       string    `json:"tenant"`
	Key          string    `json:"key"`
	ClientID     string    `json:"client_id"`
	Size         uint64    `json:"size"`
	Replicas     []Replica `json:"replicas,omitempty"`
	ReplicaCount int       `json:"replica_count,omitempty"`
	GroupID      string    `json:"group_id,omitempty"`
	DataType     uint32    `json:"data_type,omitempty"`
	HardPinned   bool      `json:"hard_pinned,omitempty"`
}

// Client calls one master at a time; the URL is per call.
type Client struct {
	HTTP *http.Client
}

// New returns a client whose calls time out after timeout.
func New(timeout time.Duration) *Client {
	return &Client{HTTP: &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}}
}

func (c *Client) post(ctx context.Context, url, path string, body any) Result {
	data, err := json.Marshal(body)
	if err != nil {
		return Result{Outcome: Failed, Code: "encode", Error: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+path, bytes.NewReader(data))
	if err != nil {
		return Result{Outcome: Failed, Code: "request", Error: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		// The request may have reached the master: its outcome is unknown.
		return Result{Outcome: Unknown, Code: "transport", Error: err.Error()}
	}
	defer resp.Body.Close()
	var r Result
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err := json.Unmarshal(raw, &r); err != nil || r.Outcome == "" {
		return Result{Outcome: Unknown, Code: "bad_response", Status: resp.StatusCode, Error: fmt.Sprintf("status %d: %.200s", resp.StatusCode, raw)}
	}
	r.Status = resp.StatusCode
	return r
}

// Put makes an object visible.
func (c *Client) Put(ctx context.Context, url string, req PutRequest) Result {
	return c.post(ctx, url, "/v1/objects/put", req)
}

// Remove removes an object.
func (c *Client) Remove(ctx context.Context, url, tenant, key string) Result {
	return c.post(ctx, url, "/v1/objects/remove", map[string]string{"tenant": tenant, "key": key})
}

// Mount registers a segment.
func (c *Client) Mount(ctx context.Context, url string, seg Segment) Result {
	return c.post(ctx, url, "/v1/segments/mount", seg)
}

// Unmount unregisters a segment.
func (c *Client) Unmount(ctx context.Context, url, endpoint string) Result {
	return c.post(ctx, url, "/v1/segments/unmount", map[string]string{"endpoint": endpoint})
}

// Update replaces a segment's descriptor.
func (c *Client) Update(ctx context.Context, url string, seg Segment) Result {
	return c.post(ctx, url, "/v1/segments/update", seg)
}

func (c *Client) get(ctx context.Context, url string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return resp.StatusCode, fmt.Errorf("decode %s: %w", url, err)
	}
	return resp.StatusCode, nil
}

// Health reads /healthz (a 503 still decodes: a failed or starting node says why).
func (c *Client) Health(ctx context.Context, url string) (Health, error) {
	var h Health
	_, err := c.get(ctx, url+"/healthz", &h)
	return h, err
}

// State reads /v1/state, with the full dump when dump is true.
func (c *Client) State(ctx context.Context, url string, dump bool) (State, error) {
	var s State
	q := ""
	if dump {
		q = "?dump=1"
	}
	_, err := c.get(ctx, url+"/v1/state"+q, &s)
	return s, err
}

// Get reads one object from the primary (linearizable).
func (c *Client) Get(ctx context.Context, url, tenant, key string) (obj Object, found bool, err error) {
	var r struct {
		Outcome string `json:"outcome"`
		Found   bool   `json:"found"`
		Object  Object `json:"object"`
		Code    string `json:"code"`
		Error   string `json:"error"`
	}
	status, err := c.get(ctx, url+"/v1/objects/get?tenant="+neturl.QueryEscape(tenant)+"&key="+neturl.QueryEscape(key), &r)
	if err != nil {
		return Object{}, false, err
	}
	if r.Outcome != OK {
		return Object{}, false, &RefusedError{Op: "get", Status: status, Code: r.Code, Msg: r.Error}
	}
	return r.Object, r.Found, nil
}

// RefusedError is a master's answer that refused a read: its HTTP status,
// code (e.g. not_primary, read_barrier) and message. Any other error of
// Get is the transport's: no master answered.
type RefusedError struct {
	Op     string
	Status int
	Code   string
	Msg    string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s: status %d %s: %s", e.Op, e.Status, e.Code, e.Msg)
}

// ReadCode is what a client history records for a read that failed with
// err: the refusal's code when a master answered, else get_failed.
func ReadCode(err error) string {
	var re *RefusedError
	if errors.As(err, &re) && re.Code != "" {
		return re.Code
	}
	return "get_failed"
}
