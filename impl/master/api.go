package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/state"
)

// MaxRequestBytes bounds a client request body.
const MaxRequestBytes = 1 << 20

func (m *Master) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/objects/put", m.handlePut)
	mux.HandleFunc("POST /v1/objects/remove", m.mutation("remove", func(r *http.Request) (state.Entry, error) {
		var req ObjectRef
		if err := decodeBody(r, &req); err != nil {
			return state.Entry{}, err
		}
		return state.Remove(req.Tenant, req.Key), req.check()
	}))
	mux.HandleFunc("POST /v1/segments/mount", m.mutation("mount", func(r *http.Request) (state.Entry, error) {
		var seg state.Segment
		err := decodeBody(r, &seg)
		return state.MountSegment(seg), err
	}))
	mux.HandleFunc("POST /v1/segments/update", m.mutation("update", func(r *http.Request) (state.Entry, error) {
		var seg state.Segment
		err := decodeBody(r, &seg)
		return state.UpdateSegment(seg), err
	}))
	mux.HandleFunc("POST /v1/segments/unmount", m.mutation("unmount", func(r *http.Request) (state.Entry, error) {
		var req struct {
			Endpoint string `json:"endpoint"`
		}
		if err := decodeBody(r, &req); err != nil {
			return state.Entry{}, err
		}
		if req.Endpoint == "" {
			return state.Entry{}, fmt.Errorf("%w: endpoint required", state.ErrMalformed)
		}
		return state.UnmountSegment(req.Endpoint), nil
	}))
	mux.HandleFunc("GET /v1/objects/get", m.handleGet)
	mux.HandleFunc("GET /v1/state", m.handleState)
	mux.HandleFunc("GET /healthz", m.handleHealth)
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.m.reg, promhttp.HandlerOpts{}))
	return mux
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
// allocator places ReplicaCount (default 1) replicas on mounted segments.
type PutRequest struct {
	ObjectRef
	ClientID     string          `json:"client_id"`
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

func (m *Master) handlePut(w http.ResponseWriter, r *http.Request) {
	m.mutation("put", func(r *http.Request) (state.Entry, error) {
		var req PutRequest
		if err := decodeBody(r, &req); err != nil {
			return state.Entry{}, err
		}
		if err := req.check(); err != nil {
			return state.Entry{}, err
		}
		if req.Size == 0 {
			return state.Entry{}, fmt.Errorf("%w: size must be > 0", state.ErrMalformed)
		}
		obj := state.Object{ClientID: req.ClientID, Size: req.Size, Replicas: req.Replicas, GroupID: req.GroupID, DataType: req.DataType, HardPinned: req.HardPinned}
		if len(obj.Replicas) == 0 {
			n := req.ReplicaCount
			if n <= 0 {
				n = 1
			}
			if n > 16 {
				return state.Entry{}, fmt.Errorf("%w: replica_count %d > 16", state.ErrMalformed, n)
			}
			reps, err := m.alloc.place(m.memorySegments(), req.Tenant, req.Key, req.Size, n)
			if err != nil {
				return state.Entry{}, err
			}
			obj.Replicas = reps
		}
		return state.PutEnd(req.Tenant, req.Key, obj), nil
	})(w, r)
}

// mutation wraps a request decoder into a handler that submits the entry to
// the group committer and answers with the outcome.
func (m *Master) mutation(op string, build func(*http.Request) (state.Entry, error)) http.HandlerFunc {
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
			res = MutationResponse{Outcome: rule.outcome, Code: rule.code, Error: err.Error()}
			status = rule.status
			if rule.code == "not_primary" || rule.code == "not_serving" {
				res.Leader = m.leader()
			}
			m.m.commitFailures.WithLabelValues(rule.code).Inc()
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
	writeJSON(w, http.StatusServiceUnavailable, MutationResponse{Outcome: OutcomeFailed, Code: "not_primary", Error: "this node is not the serving primary", Leader: leader})
}

// handleGet reads one object on the primary after a read barrier: a
// linearizable etcd read proves the producer view is still this node's, so
// no newer primary can have acknowledged a write this state lacks.
func (m *Master) handleGet(w http.ResponseWriter, r *http.Request) {
	ref := ObjectRef{Tenant: r.URL.Query().Get("tenant"), Key: r.URL.Query().Get("key")}
	if err := ref.check(); err != nil {
		writeJSON(w, http.StatusBadRequest, MutationResponse{Outcome: OutcomeFailed, Code: "malformed", Error: err.Error()})
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
		writeJSON(w, http.StatusServiceUnavailable, MutationResponse{Outcome: OutcomeFailed, Code: "read_barrier", Error: fmt.Sprintf("cannot confirm producer view %d: %v", view, err)})
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
	m.roleMu.Unlock()
	status := http.StatusOK
	if h.Role == RoleFailed || h.Role == RoleStarting {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, h)
}

// decodeBody decodes a bounded JSON body strictly (no unknown fields, one value).
func decodeBody(r *http.Request, v any) error {
	body := http.MaxBytesReader(nil, r.Body, MaxRequestBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return fmt.Errorf("%w: request body over %d bytes", state.ErrMalformed, MaxRequestBytes)
		}
		return fmt.Errorf("%w: request body: %v", state.ErrMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: request body: trailing data", state.ErrMalformed)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}
