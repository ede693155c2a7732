package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/state"
)

// Client API limits. A request over any of them is refused (4xx) before
// anything is submitted, so it changes nothing.
const (
	// MaxRequestBytes bounds a client request body (413 too_large).
	MaxRequestBytes = 1 << 20
	// MaxStringBytes bounds every string of a request: tenant, key, client
	// id, group id, replica segment, segment endpoint, name and file path
	// (400 malformed). The snapshot codec refuses longer fields, so one
	// accepted would leave every later snapshot undecodable.
	MaxStringBytes = state.MaxKeyBytes
	// MaxReplicas bounds the explicit replicas of a put (400 malformed): the
	// snapshot codec's bound.
	MaxReplicas = 1024
	// MaxReplicaCount bounds replica_count, the replicas the allocator places.
	MaxReplicaCount = 16
	// MaxPayloadBytes bounds an entry's payload as it is persisted (the
	// object or segment JSON, which the batch record carries in base64; 413
	// too_large), so one entry always fits one etcd request with room to
	// spare (etcd's --max-request-bytes is 1.5 MiB by default). JSON
	// escaping can make a payload several times longer than its request.
	MaxPayloadBytes = 512 << 10
	// maxErrorText bounds the error text of an answer: a decoder's message
	// can quote the request (an unknown field's name).
	maxErrorText = 512
)

// Errors of hostile requests, mapped to stable codes by classify.
var (
	errTooLarge      = errors.New("request too large")
	errUnknownTenant = errors.New("unknown tenant")
)

// route is one operation of the client API.
type route struct {
	method, path string
	h            http.Handler
}

func (m *Master) routes() http.Handler {
	rs := []route{
		{"POST", "/v1/objects/put", http.HandlerFunc(m.handlePut)},
		{"POST", "/v1/objects/remove", m.mutation("remove", func(r *http.Request) (state.Entry, error) {
			var req ObjectRef
			if err := decodeBody(r, &req); err != nil {
				return state.Entry{}, err
			}
			if err := m.checkRef(req); err != nil {
				return state.Entry{}, err
			}
			return state.Remove(req.Tenant, req.Key), nil
		}, nil)},
		{"POST", "/v1/segments/mount", m.mutation("mount", func(r *http.Request) (state.Entry, error) {
			return segmentEntry(r, state.MountSegment)
		}, nil)},
		{"POST", "/v1/segments/update", m.mutation("update", func(r *http.Request) (state.Entry, error) {
			return segmentEntry(r, state.UpdateSegment)
		}, nil)},
		{"POST", "/v1/segments/unmount", m.mutation("unmount", func(r *http.Request) (state.Entry, error) {
			var req struct {
				Endpoint string `json:"endpoint"`
			}
			if err := decodeBody(r, &req); err != nil {
				return state.Entry{}, err
			}
			if req.Endpoint == "" {
				return state.Entry{}, fmt.Errorf("%w: endpoint required", state.ErrMalformed)
			}
			if len(req.Endpoint) > MaxStringBytes {
				return state.Entry{}, fmt.Errorf("%w: endpoint longer than %d bytes", state.ErrMalformed, MaxStringBytes)
			}
			return state.UnmountSegment(req.Endpoint), nil
		}, nil)},
		{"GET", "/v1/objects/get", http.HandlerFunc(m.handleGet)},
		{"GET", "/v1/state", http.HandlerFunc(m.handleState)},
		{"GET", "/healthz", http.HandlerFunc(m.handleHealth)},
		{"GET", "/metrics", promhttp.HandlerFor(m.m.reg, promhttp.HandlerOpts{})},
	}
	mux := http.NewServeMux()
	allow := map[string]string{}
	for _, rt := range rs {
		mux.Handle(rt.method+" "+rt.path, rt.h)
		allow[rt.path] = rt.method
		if rt.method == http.MethodGet {
			allow[rt.path] += ", " + http.MethodHead
		}
	}
	// Everything else — an unknown path, or a known one with another
	// method — is answered in JSON like every operation, never by the
	// mux's plain-text defaults.
	unknown := func(w http.ResponseWriter, r *http.Request) {
		m.m.requests.WithLabelValues("unknown", OutcomeFailed).Inc()
		res := MutationResponse{Outcome: OutcomeFailed, Code: "unknown_op"}
		if methods, ok := allow[r.URL.EscapedPath()]; ok {
			w.Header().Set("Allow", methods)
			res.Error = clip(fmt.Sprintf("%s %s: method not allowed (allowed: %s)", r.Method, r.URL.EscapedPath(), methods))
			writeJSON(w, http.StatusMethodNotAllowed, res)
			return
		}
		res.Error = clip(fmt.Sprintf("%s %q: no such operation", r.Method, r.URL.EscapedPath()))
		writeJSON(w, http.StatusNotFound, res)
	}
	mux.HandleFunc("/", unknown)
	// The mux would redirect a path that is not clean ("/v1//objects/put",
	// "/v1/x/../objects/put"): it names no operation either.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cleanPath(r.URL.Path) != r.URL.Path {
			unknown(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// cleanPath is the path the mux would redirect p to (p itself when clean).
func cleanPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}

// segmentEntry decodes a mount or update request and validates the entry it
// makes exactly as the state will (DecodeSegment), before it is submitted.
func segmentEntry(r *http.Request, build func(state.Segment) state.Entry) (state.Entry, error) {
	var seg state.Segment
	if err := decodeBody(r, &seg); err != nil {
		return state.Entry{}, err
	}
	for _, f := range []struct{ name, v string }{{"endpoint", seg.Endpoint}, {"name", seg.Name}, {"file_path", seg.FilePath}} {
		if len(f.v) > MaxStringBytes {
			return state.Entry{}, fmt.Errorf("%w: %s longer than %d bytes", state.ErrMalformed, f.name, MaxStringBytes)
		}
	}
	e := build(seg)
	if _, err := state.DecodeSegment(e.Op, e.Payload); err != nil {
		return state.Entry{}, err
	}
	return e, checkPayload(e)
}

// checkPayload refuses an entry whose persisted payload is over MaxPayloadBytes.
func checkPayload(e state.Entry) error {
	if len(e.Payload) > MaxPayloadBytes {
		return fmt.Errorf("%w: %s payload of %d bytes once encoded, at most %d", errTooLarge, e.Op, len(e.Payload), MaxPayloadBytes)
	}
	return nil
}

// checkRef checks an object reference's bounds, then its tenant against the
// configured tenants ("" and "default" are one tenant, as in the state).
func (m *Master) checkRef(ref ObjectRef) error {
	if err := ref.check(); err != nil {
		return err
	}
	same := func(t string) bool { return state.NormalizeTenant(t) == state.NormalizeTenant(ref.Tenant) }
	if len(m.cfg.Tenants) > 0 && !slices.ContainsFunc(m.cfg.Tenants, same) {
		return fmt.Errorf("%w: %q is not one of the configured tenants", errUnknownTenant, clip(ref.Tenant))
	}
	return nil
}

// ObjectRef names an object in a request.
type ObjectRef struct {
	Tenant string `json:"tenant"`
	Key    string `json:"key"`
}

func (o ObjectRef) check() error {
	switch {
	case o.Key == "":
		return fmt.Errorf("%w: key required", state.ErrMalformed)
	case len(o.Key) > state.MaxKeyBytes || len(o.Tenant) > state.MaxKeyBytes:
		return fmt.Errorf("%w: tenant or key longer than %d bytes", state.ErrMalformed, state.MaxKeyBytes)
	}
	return nil
}

// PutRequest makes an object visible. Without Replicas the primary's
// allocator places ReplicaCount (default 1) memory replicas on mounted
// memory segments (protocol DefaultProtocol). ClientID is upstream's UUID
// in its text form "<first>-<second>" ("" or absent: 0-0).
type PutRequest struct {
	ObjectRef
	ClientID     state.UUID      `json:"client_id"`
	Size         uint64          `json:"size"`
	Replicas     []state.Replica `json:"replicas,omitempty"`
	ReplicaCount int             `json:"replica_count,omitempty"`
	GroupID      string          `json:"group_id,omitempty"`
	DataType     uint32          `json:"data_type,omitempty"`
	HardPinned   bool            `json:"hard_pinned,omitempty"`
}

// MutationResponse answers every mutation.
type MutationResponse struct {
	Outcome string `json:"outcome"`
	BatchID uint64 `json:"batch_id,omitempty"`
	Seq     uint64 `json:"seq,omitempty"`
	Code    string `json:"code,omitempty"`
	Error   string `json:"error,omitempty"`
	Leader  string `json:"leader,omitempty"`
}

// check validates a put's fields other than the object reference, before
// the allocator is asked for anything.
func (req *PutRequest) check() error {
	switch {
	case req.Size == 0:
		return fmt.Errorf("%w: size must be > 0", state.ErrMalformed)
	case len(req.GroupID) > MaxStringBytes:
		return fmt.Errorf("%w: group_id longer than %d bytes", state.ErrMalformed, MaxStringBytes)
	case req.DataType > state.MaxDataType:
		return fmt.Errorf("%w: data_type %d above %d", state.ErrMalformed, req.DataType, state.MaxDataType)
	case len(req.Replicas) > MaxReplicas:
		return fmt.Errorf("%w: %d replicas, at most %d", state.ErrMalformed, len(req.Replicas), MaxReplicas)
	case req.ReplicaCount < 0 || req.ReplicaCount > MaxReplicaCount:
		return fmt.Errorf("%w: replica_count %d: want 0..%d", state.ErrMalformed, req.ReplicaCount, MaxReplicaCount)
	}
	for i, r := range req.Replicas {
		if len(r.Segment) > MaxStringBytes || len(r.Protocol) > MaxStringBytes || len(r.FilePath) > MaxStringBytes {
			return fmt.Errorf("%w: replica %d: segment, protocol or file_path longer than %d bytes", state.ErrMalformed, i, MaxStringBytes)
		}
	}
	return nil
}

func (m *Master) handlePut(w http.ResponseWriter, r *http.Request) {
	// placed is what the allocator reserved for this request: given back
	// when the put definitely failed, so refused puts cannot use up the
	// segments.
	var placed []state.Replica
	var gen uint64
	m.mutation("put", func(r *http.Request) (state.Entry, error) {
		var req PutRequest
		if err := decodeBody(r, &req); err != nil {
			return state.Entry{}, err
		}
		if err := m.checkRef(req.ObjectRef); err != nil {
			return state.Entry{}, err
		}
		if err := req.check(); err != nil {
			return state.Entry{}, err
		}
		obj := state.Object{ClientID: req.ClientID, Size: req.Size, Replicas: req.Replicas, GroupID: req.GroupID, DataType: req.DataType, HardPinned: req.HardPinned}
		if len(obj.Replicas) == 0 {
			n := max(req.ReplicaCount, 1)
			gen = m.alloc.generation()
			reps, err := m.alloc.place(m.memorySegments(), req.Tenant, req.Key, req.Size, n)
			if err != nil {
				return state.Entry{}, err
			}
			obj.Replicas, placed = reps, reps
		}
		e := state.PutEnd(req.Tenant, req.Key, obj)
		if _, err := state.DecodeObject(e.Payload); err != nil {
			return state.Entry{}, err
		}
		return e, checkPayload(e)
	}, func(outcome string) {
		if outcome == OutcomeFailed && placed != nil {
			m.alloc.release(placed, gen)
		}
	})(w, r)
}

// mutation wraps a request decoder into a handler that submits the entry to
// the group committer and answers with the outcome. build validates the whole
// request before anything is submitted; done (may be nil) is told the outcome.
func (m *Master) mutation(op string, build func(*http.Request) (state.Entry, error), done func(outcome string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !m.isServing() {
			m.notPrimary(w, op)
			return
		}
		e, err := build(r)
		var res MutationResponse
		if err == nil {
			var c oplog.Committed
			c, err = m.submit(r.Context(), e)
			res = MutationResponse{Outcome: OutcomeOK, BatchID: c.BatchID, Seq: c.Seq}
		}
		status := http.StatusOK
		if err != nil {
			rule := classify(err)
			res = MutationResponse{Outcome: rule.outcome, Code: rule.code, Error: clip(err.Error())}
			status = rule.status
			if rule.code == "not_primary" || rule.code == "not_serving" {
				res.Leader = m.leader()
			}
			m.m.commitFailures.WithLabelValues(rule.code).Inc()
		}
		if done != nil {
			done(res.Outcome)
		}
		m.m.requests.WithLabelValues(op, res.Outcome).Inc()
		writeJSON(w, status, res)
	}
}

func (m *Master) isServing() bool {
	m.roleMu.Lock()
	defer m.roleMu.Unlock()
	return m.serving
}

func (m *Master) leader() string {
	m.roleMu.Lock()
	defer m.roleMu.Unlock()
	return m.leaderURL
}

func (m *Master) notPrimary(w http.ResponseWriter, op string) {
	leader := m.leader()
	if leader != "" {
		w.Header().Set("X-Oplogha-Leader", leader)
	}
	m.m.requests.WithLabelValues(op, OutcomeFailed).Inc()
	writeJSON(w, http.StatusServiceUnavailable,
		MutationResponse{Outcome: OutcomeFailed, Code: "not_primary", Error: "this node is not the serving primary", Leader: leader})
}

// handleGet reads one object on the primary after a read barrier: a
// linearizable etcd read proves the producer view is still this node's, so
// no newer primary can have acknowledged a write this state lacks.
func (m *Master) handleGet(w http.ResponseWriter, r *http.Request) {
	ref := ObjectRef{Tenant: r.URL.Query().Get("tenant"), Key: r.URL.Query().Get("key")}
	if err := m.checkRef(ref); err != nil {
		rule := classify(err)
		m.m.requests.WithLabelValues("get", OutcomeFailed).Inc()
		writeJSON(w, rule.status, MutationResponse{Outcome: OutcomeFailed, Code: rule.code, Error: clip(err.Error())})
		return
	}
	m.roleMu.Lock()
	serving, view := m.serving, m.view
	m.roleMu.Unlock()
	if !serving {
		m.notPrimary(w, "get")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), m.cfg.requestTimeout())
	defer cancel()
	resp, err := m.cli.Get(ctx, m.ks.ProducerView())
	if err != nil || len(resp.Kvs) == 0 || string(resp.Kvs[0].Value) != fmt.Sprint(view) {
		m.m.requests.WithLabelValues("get", OutcomeFailed).Inc()
		writeJSON(w, http.StatusServiceUnavailable,
			MutationResponse{Outcome: OutcomeFailed, Code: "read_barrier", Error: fmt.Sprintf("cannot confirm producer view %d: %v", view, err)})
		return
	}
	m.mu.RLock()
	obj, ok := m.st.Object(ref.Tenant, ref.Key)
	cur := m.st.Cursor()
	m.mu.RUnlock()
	m.m.requests.WithLabelValues("get", OutcomeOK).Inc()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"outcome": OutcomeOK, "found": false, "cursor": cur})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"outcome": OutcomeOK, "found": true, "object": obj, "cursor": cur})
}

// StateResponse is GET /v1/state: the applied cursor and content digest,
// with the whole content when asked (?dump=1), for audits.
type StateResponse struct {
	Role     Role            `json:"role"`
	Cursor   state.Cursor    `json:"cursor"`
	Digest   state.Digest    `json:"digest"`
	Objects  int             `json:"objects"`
	Segments int             `json:"segments"`
	Dump     []DumpedObject  `json:"dump,omitempty"`
	SegDump  []state.Segment `json:"segment_dump,omitempty"`
}

// DumpedObject is one object of a state dump.
type DumpedObject struct {
	state.ObjectKey
	Object state.Object `json:"object"`
}

func (m *Master) handleState(w http.ResponseWriter, r *http.Request) {
	c := m.capture()
	role, _ := m.RoleGeneration()
	resp := StateResponse{Role: role, Cursor: c.Cursor(), Digest: c.Digest()}
	resp.Objects, resp.Segments = c.Len()
	if r.URL.Query().Get("dump") == "1" {
		resp.Dump = make([]DumpedObject, 0, resp.Objects)
		c.Objects(func(k state.ObjectKey, o state.Object) bool {
			resp.Dump = append(resp.Dump, DumpedObject{ObjectKey: k, Object: o})
			return true
		})
		c.Segments(func(s state.Segment) bool {
			resp.SegDump = append(resp.SegDump, s)
			return true
		})
	}
	writeJSON(w, http.StatusOK, resp)
}

// Health is GET /healthz.
type Health struct {
	NodeID         string       `json:"node_id"`
	Role           Role         `json:"role"`
	Serving        bool         `json:"serving"`
	RoleGeneration uint64       `json:"role_generation"`
	Cursor         state.Cursor `json:"cursor"`
	DurablePrefix  uint64       `json:"durable_prefix_batch_id"`
	ProducerView   uint64       `json:"producer_view"`
	Leader         string       `json:"leader,omitempty"`
	Bootstrap      struct {
		BootstrapInfo
		DurationMS int64 `json:"duration_ms"`
	} `json:"bootstrap"`
	ApplyError string `json:"apply_error,omitempty"`
	Time       string `json:"time"`
	// Incarnation names this process (pid and start time): an observer
	// that sees it change knows the node restarted, even when it never saw
	// the node down.
	Incarnation string `json:"incarnation"`
	// Promotable is false while this node may not campaign: not
	// bootstrapped, or a standby whose cursor is below the compaction floor.
	Promotable bool `json:"promotable"`
}

func (m *Master) handleHealth(w http.ResponseWriter, r *http.Request) {
	h := Health{NodeID: m.cfg.nodeID(), Cursor: m.cursor(), Time: time.Now().UTC().Format(time.RFC3339Nano),
		Incarnation: fmt.Sprintf("%d@%d", os.Getpid(), m.started.UnixNano())}
	m.roleMu.Lock()
	h.Role, h.Serving, h.RoleGeneration, h.ProducerView, h.Leader = m.role, m.serving, m.roleGen, m.view, m.leaderURL
	h.DurablePrefix = m.durable.BatchID
	h.Bootstrap.BootstrapInfo = m.boot
	h.Bootstrap.DurationMS = m.boot.Duration.Milliseconds()
	h.ApplyError = m.applyErr
	h.Promotable = m.promotable && h.Role != RoleFailed && h.Role != RoleStarting
	m.roleMu.Unlock()
	status := http.StatusOK
	if h.Role == RoleFailed || h.Role == RoleStarting {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, h)
}

// decodeBody decodes a bounded JSON body strictly (no unknown fields, one
// value): a body over MaxRequestBytes is errTooLarge, anything else wrong
// state.ErrMalformed.
func decodeBody(r *http.Request, v any) error {
	if r.ContentLength > MaxRequestBytes {
		return fmt.Errorf("%w: request body of %d bytes, at most %d", errTooLarge, r.ContentLength, MaxRequestBytes)
	}
	body := http.MaxBytesReader(nil, r.Body, MaxRequestBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	overLimit := func(err error) bool {
		var mbe *http.MaxBytesError
		return errors.As(err, &mbe)
	}
	if err := dec.Decode(v); err != nil {
		if overLimit(err) {
			return fmt.Errorf("%w: request body over %d bytes", errTooLarge, MaxRequestBytes)
		}
		return fmt.Errorf("%w: request body: %w", state.ErrMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if overLimit(err) {
			return fmt.Errorf("%w: request body over %d bytes", errTooLarge, MaxRequestBytes)
		}
		return fmt.Errorf("%w: request body: trailing data", state.ErrMalformed)
	}
	return nil
}

// clip bounds a text that may quote a request.
func clip(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	return strings.ToValidUTF8(s[:maxErrorText], "") + "…"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}
