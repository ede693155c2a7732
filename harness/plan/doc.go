// Package plan splits a batch of runs into shards for a fan-out over many
// machines (a CI matrix): every shard computes the same ordered list of runs
// from the same inputs, then keeps its own slice of it, so the shards
// together run every run exactly once without talking to each other.
package plan
