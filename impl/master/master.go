package master

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/retention"
	"github.com/oplogha/oplogha/impl/state"
)

// Role is where a master stands.
type Role string

// Roles. A failed master could not bootstrap: it serves nothing and never
// campaigns until its bootstrap succeeds.
const (
	RoleStarting  Role = "starting"
	RoleStandby   Role = "standby"
	RolePromoting Role = "promoting"
	RolePrimary   Role = "primary"
	RoleFailed    Role = "failed"
)

// BootstrapInfo is how the local state was first built.
type BootstrapInfo struct {
	Source   string        `json:"source"` // latest | fallback | oplog | empty
	Duration time.Duration `json:"-"`
	Error    string        `json:"error,omitempty"`
	// LegacyImport is the legacy snapshot id this node imported as the
	// first primary of its namespace (legacy-import mode).
	LegacyImport string `json:"legacy_import,omitempty"`
}

// Master is one master process.
type Master struct {
	cfg Config
	log *slog.Logger
	ks  keyspace.Keyspace
	cli *clientv3.Client
	m   *metrics

	mu sync.RWMutex // guards st; Begin/Capture take it exclusively
	st *state.State

	alloc allocator

	roleMu    sync.Mutex
	role      Role
	roleGen   uint64
	serving   bool
	view      uint64
	leaderURL string
	committer *oplog.GroupCommitter
	boot      BootstrapInfo
	store     objstore.Store
	trust     atomic.Pointer[objstore.Trust] // nil until the store's probe answered
	durable   oplog.DurablePrefix
	applyErr  string

	// promotable is false while a standby may not campaign (below the
	// floor); guarded by roleMu.
	promotable bool

	listener net.Listener
	started  time.Time // when Run began: the age of "no snapshot yet"

	// legacy is a legacy snapshot read and validated at startup, imported
	// when this node first becomes primary (legacy-import mode); nil after.
	legacy *legacy.Snapshot
	// refused ends Run: a promotion met an operator-input failure.
	refused error
	// verified remembers snapshots this node verified completely (the
	// retention cycle's cache).
	verified *retention.Verified
	// headTime adds up the time the snapshot store's HEADs take.
	headTime atomic.Int64
	// publications counts the snapshots this node published (the
	// snapshot loop's backoff ends on one).
	publications atomic.Int64
	// growth estimates the capacity exhaustion horizon.
	growth growth
}

// New validates cfg and prepares a master; Run starts it.
func New(cfg Config, log *slog.Logger) (*Master, error) {
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, &ConfigError{Errs: errs}
	}
	ks, _ := keyspace.New(cfg.ClusterID)
	m := &Master{cfg: cfg, ks: ks, m: newMetrics(), st: state.New(), role: RoleStarting, verified: &retention.Verified{},
		log: log.With("node", cfg.nodeID(), "cluster", cfg.ClusterID)}
	m.m.setRole(RoleStarting)
	return m, nil
}

// ConfigError holds every validation failure, one per line.
type ConfigError struct{ Errs []error }

func (e *ConfigError) Error() string { return errors.Join(e.Errs...).Error() }

// Addr is the client API's bound address (after Run has started listening).
func (m *Master) Addr() string {
	if m.listener == nil {
		return ""
	}
	return m.listener.Addr().String()
}

// Run serves until ctx ends: client API first (healthz reports progress),
// then bootstrap, then alternating standby and primary terms.
func (m *Master) Run(ctx context.Context) error {
	cc, err := m.cfg.etcdClientConfig()
	if err != nil {
		return err
	}
	if err := checkEtcdTLS(ctx, cc); err != nil {
		return err
	}
	cli, err := m.dialEtcd(ctx, cc)
	if err != nil {
		return err
	}
	defer cli.Close()
	m.cli = cli
	if err := m.checkEtcdAccess(ctx, cli); err != nil {
		return err
	}
	m.started = time.Now()
	ln, err := net.Listen("tcp", m.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", m.cfg.Listen, err)
	}
	m.listener = ln
	srv := &http.Server{Handler: m.routes(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error("client API stopped", "code", "api_failed", "err", err)
		}
	}()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	m.log.Info("started", "phase", "start", "listen", ln.Addr().String(), "advertise", m.cfg.advertise(), "etcd", m.cfg.EtcdEndpoints)
	if m.store, err = m.openStore(); err != nil {
		return fmt.Errorf("snapshot store: %w", err)
	}
	if m.cfg.SnapshotBootstrapMode == "legacy-import" {
		if err := m.prepareLegacyImport(ctx); err != nil {
			return fmt.Errorf("legacy import refused: %w", err)
		}
	}
	if m.store != nil {
		go m.probeStore(ctx)
	}

	if err := m.bootstrapUntilDone(ctx); err != nil {
		return err
	}
	go m.capacityLoop(ctx)
	if m.cfg.EnableStandbySnapshot {
		go m.snapshotLoop(ctx)
	}
	for ctx.Err() == nil {
		term, err := m.standbyTerm(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			m.log.Warn("standby term ended", "phase", "campaign", "code", "campaign_failed", "err", err)
			// A place in the queue lost with its lease is taken again
			// after one poll: a node still bootstrapping must not get in
			// first. Other failures (etcd unreachable, not promotable)
			// wait a second.
			if errors.Is(err, errSessionEnded) {
				sleep(ctx, m.cfg.pollInterval())
			} else {
				sleep(ctx, time.Second)
			}
			continue
		}
		served := m.primaryTerm(ctx, term)
		if m.refused != nil {
			return fmt.Errorf("legacy import refused: %w", m.refused)
		}
		if !served {
			// A promotion that failed (a record it cannot read, a gap) fails
			// the same way until someone repairs it: campaigning again at
			// once would loop, claiming a new producer view each time.
			sleep(ctx, promotionRetry)
		}
	}
	m.log.Info("stopped", "phase", "stop")
	return nil
}

// promotionRetry is how long a node whose promotion failed waits before it
// campaigns again (it resigned: another node may win meanwhile).
const promotionRetry = time.Second

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// setRole moves to r and bumps the role generation: a capture overlapping a
// transition is invalid.
func (m *Master) setRole(r Role) {
	m.roleMu.Lock()
	m.role = r
	m.roleGen++
	gen := m.roleGen
	m.roleMu.Unlock()
	m.m.setRole(r)
	m.m.roleGeneration.Set(float64(gen))
}

// RoleGeneration is the local, non-persisted role generation, for the
// snapshot worker's capture rule.
func (m *Master) RoleGeneration() (Role, uint64) {
	m.roleMu.Lock()
	defer m.roleMu.Unlock()
	return m.role, m.roleGen
}

// bootstrapUntilDone builds the local state from etcd. Until it succeeds the
// master is failed: non-serving and non-promotable; it retries so a repaired
// cluster is picked up without a restart.
func (m *Master) bootstrapUntilDone(ctx context.Context) error {
	for {
		info, err := m.bootstrap(ctx)
		m.roleMu.Lock()
		m.boot = info
		m.roleMu.Unlock()
		if err == nil {
			m.setRole(RoleStandby)
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, oplog.ErrResidue) {
			// Residue without a history is for an operator to resolve
			// (restore the history, or reset the namespace): refuse to start.
			return fmt.Errorf("bootstrap refused: %w", err)
		}
		m.m.bootstrapFailures.Inc()
		if r, _ := m.RoleGeneration(); r != RoleFailed {
			m.setRole(RoleFailed)
		}
		m.log.Error("bootstrap failed closed", "phase", "bootstrap", "code", errorCode(err), "err", err)
		sleep(ctx, 2*time.Second)
	}
}

func (m *Master) noteApplied(c state.Cursor) {
	m.m.appliedBatch.Set(float64(c.BatchID))
	m.m.appliedSeq.Set(float64(c.Seq))
}

func (m *Master) noteDurable(p oplog.DurablePrefix) {
	m.roleMu.Lock()
	if p.BatchID > m.durable.BatchID {
		m.durable = p
	}
	m.roleMu.Unlock()
	m.m.durablePrefix.Set(float64(p.BatchID))
}

// cursor is the applied cursor.
func (m *Master) cursor() state.Cursor {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.st.Cursor()
}

// memorySegments lists the mounted memory segments (the allocator's input).
func (m *Master) memorySegments() []state.Segment {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var segs []state.Segment
	m.st.Segments(func(s state.Segment) bool {
		if s.Kind == state.ReplicaMemory {
			segs = append(segs, s)
		}
		return true
	})
	return segs
}

// footprint is what the state's content costs (state.Footprint, kept as
// it changes): the snapshot admission's estimate is made from it.
func (m *Master) footprint() state.Footprint {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.st.Footprint()
}

// capture is an O(1) immutable view of the state. It forks the live trees
// (an exclusive lock, and later writes copy the paths they touch): take one
// only to keep a consistent view, not to read a field.
func (m *Master) capture() *state.Capture {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.Capture()
}
