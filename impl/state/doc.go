// Package state is the metadata model of a Mooncake Store master as the RFC
// "State Persisted in the Snapshot" names it: objects keyed by (tenant, key)
// with their replica descriptors, and the segment registry keyed by transport
// endpoint, together with the applied batch cursor. It holds what upstream's
// entry payloads carry (payload.go converts through impl/contract), and
// Apply follows upstream's OpLogApplier (apply.go lists its rules).
//
// The state lives in copy-on-write B-trees, so Capture is O(1): it shares every
// node with the live state and later applies copy only the paths they touch.
// Apply is deterministic and atomic per batch: a batch that fails any entry
// leaves the state and its cursor exactly as they were.
//
// A State is not safe for concurrent use; its owner serialises Apply. A Capture
// is immutable and may be read from any goroutine while the State goes on.
package state
