package faults

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// Env is everything a fault can act on, one capability per interface, so
// that each kind (and each test double) names only the part it reaches.
// The runtimes (harness/cluster) implement all of it.
type Env interface {
	Nodes
	Processes
	Network
	Failpoints
	Etcd
	Store
	WorkDirs
}

// Nodes names the cluster's nodes and chooses among them.
type Nodes interface {
	// Masters and EtcdMembers name the nodes, e.g. "master-0", "etcd-2".
	Masters() []string
	EtcdMembers() []string
	// Primary names the serving primary; Standbys the running non-primaries.
	Primary(ctx context.Context) (string, error)
	Standbys(ctx context.Context) ([]string, error)
	// EtcdLeader names the etcd member that leads.
	EtcdLeader(ctx context.Context) (string, error)
	// Running reports whether a node's process is up; Paused whether it is
	// up but frozen (SIGSTOP, docker pause).
	Running(name string) bool
	Paused(name string) bool
	// Rand is the run's seeded source for choices the scenario leaves open.
	Rand() *rand.Rand
}

// Processes signals a node's process by name.
type Processes interface {
	// Kill (SIGKILL), Pause (SIGSTOP), Resume (SIGCONT), Stop (SIGTERM then
	// SIGKILL) and Start a node by name.
	Kill(name string) error
	Pause(name string) error
	Resume(name string) error
	Stop(name string, grace time.Duration) error
	Start(ctx context.Context, name string) error
}

// Network reaches the toxiproxy links between nodes.
type Network interface {
	// Links names every toxiproxy link; Link acts on one.
	Links() []string
	Link(name string) (Link, error)
}

// Link is one proxied connection path.
type Link interface {
	Down() error
	Up() error
	AddToxic(name, kind, stream string, toxicity float32, attrs map[string]any) error
	RemoveToxic(name string) error
}

// Failpoints arms and clears a master's gofail failpoints.
type Failpoints interface {
	// Failpoint sets (term) or clears (term "") a failpoint on a master.
	Failpoint(ctx context.Context, master, name, term string) error
}

// Etcd reaches the cluster's namespace behind the masters' back.
type Etcd interface {
	// Keyspace names the cluster's etcd keys (impl/contract): the keys
	// EtcdGet and EtcdPut take.
	Keyspace() keyspace.Keyspace
	// EtcdGet and EtcdPut read and write a key of the cluster's namespace
	// directly (not through any link): corruption behind the masters' back.
	EtcdGet(ctx context.Context, key string) ([]byte, error)
	EtcdPut(ctx context.Context, key string, value []byte) (revision int64, err error)
	// EtcdSwap puts value at key only if the key still holds old (nil: is
	// absent), in one transaction: a fault that read a record and writes
	// over it, or a heal that puts the record back, never overwrites what a
	// master wrote in between (swapped false, nothing written).
	EtcdSwap(ctx context.Context, key string, old, value []byte) (revision int64, swapped bool, err error)
	// EtcdRevision is etcd's current revision, read linearizably.
	EtcdRevision(ctx context.Context) (int64, error)
	// RevokeWriterLease revokes the lease holding /snapshot/maintenance (held by
	// node, when not empty) and says whose it was.
	RevokeWriterLease(ctx context.Context, node string, wait time.Duration) (holder string, err error)
	// CompactDefrag compacts etcd's MVCC history at the current revision and
	// defragments every member; it says what the database sizes did.
	CompactDefrag(ctx context.Context) (report string, err error)
}

// KeyEnv is an Env that also reaches what EtcdGet and EtcdPut cannot: it
// deletes a key of the namespace and finds the key under a prefix with the
// lowest create revision (the election's leader). The garbage kind needs it
// for the leader target and to heal garbage left in keys that only a lease
// removes (snapshot/maintenance, leader), lose-history to delete the history;
// without it those are unavailable.
type KeyEnv interface {
	Env
	EtcdDelete(ctx context.Context, key string) (revision int64, err error)
	// EtcdDeleteIf deletes key only if it holds old, in one transaction.
	EtcdDeleteIf(ctx context.Context, key string, old []byte) (revision int64, deleted bool, err error)
	// EtcdOldest is the key under prefix with the lowest create revision,
	// and its value (an empty key when there is none).
	EtcdOldest(ctx context.Context, prefix string) (key string, value []byte, err error)
	// EtcdDeleteAll deletes keys and every key under prefixes in one
	// transaction: its revision and how many keys went.
	EtcdDeleteAll(ctx context.Context, keys, prefixes []string) (revision, deleted int64, err error)
}

// Store reaches the snapshot store's objects behind the server's back.
type Store interface {
	// StoreFile is the file behind a stored object, for corruption behind
	// the S3 server's back.
	StoreFile(key string) (string, error)
	// StorePut places an object through the store's own API (the S3
	// server), as any writer would: no corruption, a stray object.
	StorePut(ctx context.Context, key string, data []byte) error
}

// WorkDirs names a master's local directories.
type WorkDirs interface {
	// WorkDir is a master's snapshot work directory.
	WorkDir(master string) (string, error)
}

// Partitioner is an Env whose nodes have network addresses of their own
// that can be cut off (the docker runtime).
type Partitioner interface {
	Disconnect(ctx context.Context, node string) error
	Reconnect(ctx context.Context, node string) error
}
