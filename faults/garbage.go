package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
)

// Garbage forms: how a record is replaced by bytes that are not a valid record.
const (
	// FormRandom: bytes drawn from the run's seed (an object keeps its
	// length, so only its checksum can tell; a key gets 16–63 bytes whose
	// first byte is not ASCII, so never JSON nor a decimal).
	FormRandom = "random"
	// FormTruncated: the valid record cut to its first half (a decimal, whose
	// prefixes are decimals too, is cut to nothing).
	FormTruncated = "truncated"
	// FormWrongFields: well-formed in its container with the wrong fields —
	// a JSON record with one top-level field renamed (a required field gone,
	// an unknown one there); a batch record with its first entry's key
	// changed under the old checksum (canonical, well-typed, only the
	// checksum can tell); the producer view as a JSON object; a writer token
	// of a node that does not exist; an object of a snapshot replaced by the
	// same-named object of the other pointer's snapshot (well-formed and
	// internally valid, but another snapshot's), or, when there is none that
	// differs, a renamed field (JSON) or one flipped byte (binary).
	FormWrongFields = "wrong-fields"
	// FormEmpty: the key kept with an empty value (etcd then returns no
	// value bytes: a reader that calls that absent misreads it). Keys only.
	FormEmpty = "empty"
	// FormAbsent: the key deleted; a heal puts its value back. Keys only.
	FormAbsent = "absent"
	// FormAhead: for the producer view, a canonical view 1000 above the
	// current one, which no primary claimed and no batch was appended
	// under (valid: a reader must take it as the fence it is); for the
	// compaction floor, a valid floor above both pointers and at most the
	// durable prefix (an outside write no retention cycle would make).
	// No heal: lowering a view would unfence every writer between, and the
	// floor never decreases.
	FormAhead = "ahead"
)

// GarbageForms lists the forms a spec without attrs.form draws from (the
// run's seed picks one); the key-only forms are named explicitly.
var GarbageForms = []string{FormRandom, FormTruncated, FormWrongFields}

// keyOnlyForms are the forms for etcd keys only, never drawn.
var keyOnlyForms = []string{FormEmpty, FormAbsent, FormAhead}

func garbageForm(s Spec) (string, error) {
	for k := range s.Attrs {
		if k != "form" {
			return "", fmt.Errorf("garbage: attrs.%s: only attrs.form is known", k)
		}
	}
	v, ok := s.Attrs["form"]
	if !ok {
		return "", nil
	}
	f, _ := v.(string)
	for _, g := range append(append([]string{}, GarbageForms...), keyOnlyForms...) {
		if f == g {
			return f, nil
		}
	}
	return "", fmt.Errorf("garbage: attrs.form %v: want random, truncated, wrong-fields, empty, absent or ahead (or none: a seeded choice)", v)
}

// injectGarbage overwrites the target with garbage and sets how to heal.
func injectGarbage(ctx context.Context, env Env, s Spec, in *Injected) error {
	t, err := ParseGarbageTarget(s.Target)
	if err != nil {
		return err
	}
	form, err := garbageForm(s)
	if err != nil {
		return err
	}
	rnd := env.Rand()
	if form == "" {
		form = GarbageForms[rnd.IntN(len(GarbageForms))]
	}
	if t.Object != "" {
		desc, id, err := garbageObject(ctx, env, rnd, t, form)
		if err != nil {
			return err
		}
		in.Targets = []string{desc}
		in.corrupted(id)
		return nil
	}
	// A master may move the key between the read of its record and the
	// write over it (a retention cycle moving the floor): the write is a
	// swap from the record read, and a swap that lost is read again.
	for attempt := 1; ; attempt++ {
		err := garbageKey(ctx, env, rnd, t, form, in)
		if !errors.Is(err, errMovedMeanwhile) || attempt == garbageAttempts {
			return err
		}
	}
}

// garbageAttempts bounds the reads of a key that keeps moving under the
// garbage fault.
const garbageAttempts = 5

// errMovedMeanwhile: the key changed between the fault's read and its write;
// nothing was written.
var errMovedMeanwhile = errors.New("the key changed between its read and the write over it: nothing written")

// garbageKey overwrites one etcd key of the contract.
func garbageKey(ctx context.Context, env Env, rnd *rand.Rand, t GarbageTarget, form string, in *Injected) error {
	ks := env.Keyspace()
	key := t.key(ks)
	var orig []byte
	var err error
	note := ""
	switch {
	case t.Name == TargetLeader:
		ke, ok := env.(KeyEnv)
		if !ok {
			return fmt.Errorf("%w: the leader target needs an environment that lists the election prefix", ErrUnavailable)
		}
		key, orig, err = ke.EtcdOldest(ctx, ks.LeaderCandidates())
		if err != nil {
			return fmt.Errorf("find the leader key: %w", err)
		}
		if orig == nil {
			return fmt.Errorf("%w: no leader key in the election prefix", ErrUnavailable)
		}
		note = " (now detached from its session's lease)"
	case t.Batch != "":
		id, err := garbageBatchID(ctx, env, t.Batch)
		if err != nil {
			return err
		}
		key = ks.Batch(id)
		if orig, err = env.EtcdGet(ctx, key); err != nil {
			return err
		}
		if orig == nil {
			return fmt.Errorf("%w: batch %d is not in the OpLog", ErrUnavailable, id)
		}
	case t.Name == TargetMaintenance:
		// Strongest when a holder is mid-attempt: its CAS must then fail.
		// Wait a little for one; with none, the empty slot gets the garbage.
		deadline := time.Now().Add(10 * time.Second)
		for {
			if orig, err = env.EtcdGet(ctx, key); err != nil {
				return err
			}
			if orig != nil || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		if orig == nil {
			note = " (no holder: written into the empty slot)"
		} else {
			note = " (over the holder's token " + string(orig) + ")"
		}
	default:
		if orig, err = env.EtcdGet(ctx, key); err != nil {
			return err
		}
		if orig == nil {
			return fmt.Errorf("%w: no %s to overwrite", ErrUnavailable, t.Name)
		}
	}
	name := shortKey(ks, key)
	if form == FormAbsent {
		return absentKey(ctx, env, key, name, orig, in)
	}
	garbage, err := keyGarbage(rnd, t, form, orig)
	if form == FormAhead && t.Name == TargetFloor {
		var f uint64
		if f, err = floorAhead(ctx, env); err == nil {
			garbage = batchsnap.Floor{BatchID: f}.Encode()
		}
	}
	if err != nil {
		return err
	}
	if bytes.Equal(garbage, orig) {
		return fmt.Errorf("garbage for %s equals its value", name)
	}
	rev, swapped, err := env.EtcdSwap(ctx, key, orig, garbage)
	if err != nil {
		return err
	}
	if !swapped {
		return fmt.Errorf("%s: %w", name, errMovedMeanwhile)
	}
	in.Revisions = append(in.Revisions, rev)
	in.Targets = []string{fmt.Sprintf("%s %s: %s%s", name, form, quote(garbage), note)}
	switch {
	case form == FormAhead:
		// No heal: lowering the view would unfence every writer between.
	case t.Name == TargetLatest, t.Name == TargetFallback:
		// No heal: a newer publication repairs a pointer slot.
	case t.Name == TargetMaintenance, t.Name == TargetLeader:
		// Only a lease removes these keys, and the put detached it: the
		// operator's repair is deleting the stray key.
		in.heal = restoreHeal(env, key, name, garbage, nil, in, "no longer holds the garbage written")
	default:
		// The operator's repair: the record as it was, only over the
		// garbage (every writer compares the raw value, so nothing should
		// have moved it; if something did, it is not undone).
		in.heal = restoreHeal(env, key, name, garbage, orig, in, "no longer holds the garbage written")
	}
	return nil
}

// floorAhead is a floor above the latest pointer's batch and at most the
// durable prefix's: half-way between them, so the standbys, which follow
// the prefix closely, stay above it (a standby below the floor may only
// rebootstrap, and with no snapshot above the floor could not) while the
// next publication's S_safe, the latest of now, is below it.
func floorAhead(ctx context.Context, env Env) (uint64, error) {
	latest, err := garbageBatchID(ctx, env, "suffix") // latest's batch + 1
	if err != nil {
		return 0, err
	}
	top, err := durableBatch(ctx, env)
	if err != nil {
		return 0, err
	}
	if top < latest {
		return 0, fmt.Errorf("%w: no batch above the latest pointer's yet (durable prefix %d)", ErrUnavailable, top)
	}
	return latest + (top-latest)/2, nil
}

// restoreHeal is a heal that puts orig back at key (orig nil: deletes the
// key) if the key still holds written (nil: is absent); otherwise it
// writes nothing and says what the key holds now.
func restoreHeal(env Env, key, name string, written, orig []byte, in *Injected, otherwise string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		var rev int64
		var restored bool
		var err error
		switch {
		case orig == nil && written == nil:
			return nil // absent before and after: nothing to put back
		case orig == nil:
			ke, ok := env.(KeyEnv)
			if !ok {
				return fmt.Errorf("%w: deleting %s needs an environment that deletes keys", ErrUnavailable, name)
			}
			rev, restored, err = ke.EtcdDeleteIf(ctx, key, written)
		default:
			rev, restored, err = env.EtcdSwap(ctx, key, written, orig)
		}
		if err != nil {
			return err
		}
		if !restored {
			return notRepaired(ctx, env, key, name, otherwise)
		}
		in.HealRevisions = append(in.HealRevisions, rev)
		return nil
	}
}

// notRepaired is the error of a heal that found its key written by
// someone else: what the key holds now (or that it could not be read).
func notRepaired(ctx context.Context, env Env, key, name, why string) error {
	cur, err := env.EtcdGet(ctx, key)
	if err != nil {
		return fmt.Errorf("%s %s (now unreadable: %w): not repaired", name, why, err)
	}
	if cur == nil {
		return fmt.Errorf("%s %s (now absent): not repaired", name, why)
	}
	return fmt.Errorf("%s %s (now %s): not repaired", name, why, quote(cur))
}

// absentKey deletes a record key if it still holds orig; its heal puts the
// value back, unless something wrote the key meanwhile.
func absentKey(ctx context.Context, env Env, key, name string, orig []byte, in *Injected) error {
	ke, ok := env.(KeyEnv)
	if !ok {
		return fmt.Errorf("%w: deleting %s needs an environment that deletes keys", ErrUnavailable, name)
	}
	rev, deleted, err := ke.EtcdDeleteIf(ctx, key, orig)
	if err != nil {
		return err
	}
	if !deleted {
		return fmt.Errorf("%s: %w", name, errMovedMeanwhile)
	}
	in.Revisions = append(in.Revisions, rev)
	in.Targets = []string{fmt.Sprintf("%s absent (was %s)", name, quote(orig))}
	in.heal = restoreHeal(env, key, name, nil, orig, in, "was written again meanwhile")
	return nil
}

// garbageBatchID resolves first, last, suffix (the first batch after the
// latest pointer's cursor: needed by every recovery path) or a batch id.
func garbageBatchID(ctx context.Context, env Env, which string) (uint64, error) {
	switch which {
	case "first":
		return 1, nil
	case "last":
		return durableBatch(ctx, env)
	case "suffix":
		raw, err := env.EtcdGet(ctx, env.Keyspace().SnapshotLatest())
		if err != nil {
			return 0, err
		}
		var p struct {
			BatchID uint64 `json:"last_included_batch_id"`
		}
		if raw == nil || json.Unmarshal(raw, &p) != nil || p.BatchID == 0 {
			return 0, fmt.Errorf("%w: batches/suffix needs a readable latest pointer", ErrUnavailable)
		}
		return p.BatchID + 1, nil
	}
	return strconv.ParseUint(which, 10, 64)
}

// keyGarbage makes the garbage for one key's value.
func keyGarbage(rnd *rand.Rand, t GarbageTarget, form string, orig []byte) ([]byte, error) {
	switch form {
	case FormRandom:
		b := make([]byte, 16+rnd.IntN(48))
		fill(rnd, b)
		b[0] |= 0x80
		return b, nil
	case FormTruncated:
		if t.Name == TargetView {
			return []byte{}, nil
		}
		return bytes.Clone(orig[:len(orig)/2]), nil
	case FormEmpty:
		return []byte{}, nil
	case FormAhead:
		if t.Name == TargetFloor {
			return nil, nil // garbageKey writes the floor (floorAhead)
		}
		v, err := batchlog.DecodeProducerView(orig)
		if err != nil {
			return nil, fmt.Errorf("producer view to move ahead does not decode (%v): %s", err, quote(orig))
		}
		return batchlog.EncodeProducerView(v + 1000)
	}
	switch {
	case t.Name == TargetView:
		return fmt.Appendf(nil, `{"producer_view":%s}`, orig), nil
	case t.Name == TargetMaintenance:
		return fmt.Appendf(nil, "ghost-node/%x/%024x", rnd.Int64(), rnd.Uint64()), nil
	case t.Name == TargetLeader:
		v, err := json.Marshal(map[string]string{"leader": string(orig)})
		return v, err
	case t.Batch != "":
		return batchWrongFields(orig)
	}
	return renameField(rnd, orig)
}

// batchWrongFields changes the key of a batch record's first entry and
// keeps its checksum: the record is what upstream's encoder writes for the
// changed batch (batchlog.EncodeBatch), well-typed and of the right shape,
// but with the checksum of the batch it was, so only the checksum tells.
func batchWrongFields(orig []byte) ([]byte, error) {
	b, err := batchlog.DecodeBatch(orig)
	if err != nil {
		return nil, fmt.Errorf("batch record to change does not decode (%v): %s", err, quote(orig))
	}
	b.Entries[0].Key += "-garbage"
	rec, err := batchlog.EncodeBatch(b)
	if err != nil {
		return nil, fmt.Errorf("changed batch record: %w", err)
	}
	keep := bytes.LastIndexByte(orig, ',')
	cut := bytes.LastIndexByte(rec, ',')
	if keep < 0 || cut < 0 {
		return nil, fmt.Errorf("batch record without a checksum element: %s", quote(orig))
	}
	return append(rec[:cut:cut], orig[keep:]...), nil
}

// renameField renames one top-level field (a seeded choice) of a JSON
// object, leaving every other byte as it was.
func renameField(rnd *rand.Rand, orig []byte) ([]byte, error) {
	if t := bytes.TrimSpace(orig); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("not a JSON object: %s", quote(orig))
	}
	dec := json.NewDecoder(bytes.NewReader(orig))
	var ends []int64 // offset just past each top-level key's closing quote
	depth, wantKey := 0, false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
			}
			// Entering the top object, or a nested value just ended: a key follows.
			wantKey = depth == 1
			continue
		case string:
			if depth == 1 && wantKey {
				ends = append(ends, dec.InputOffset())
				wantKey = false
				continue
			}
		}
		if depth == 1 {
			wantKey = true // a value at the top level ends; a key follows
		}
	}
	if len(ends) == 0 {
		return nil, fmt.Errorf("no top-level field to rename in %s", quote(orig))
	}
	at := ends[rnd.IntN(len(ends))] - 1 // the key's closing quote
	out := append(bytes.Clone(orig[:at]), "_garbage"...)
	return append(out, orig[at:]...), nil
}

// garbageObject overwrites one object of the snapshot a pointer names, in
// the file behind the S3 server.
func garbageObject(ctx context.Context, env Env, rnd *rand.Rand, t GarbageTarget, form string) (desc, id string, err error) {
	prefix, id, err := pointerPrefix(ctx, env, t.Slot)
	if err != nil {
		return "", "", err
	}
	rel := t.Object
	if t.Object == "chunk" {
		dir, err := env.StoreFile(path.Join(prefix, "objects") + "/")
		if err != nil {
			return "", "", err
		}
		chunks, _ := filepath.Glob(filepath.Join(dir, "*.bin"))
		if len(chunks) == 0 {
			return "", "", fmt.Errorf("%w: snapshot %s has no chunk on disk", ErrUnavailable, id)
		}
		sort.Strings(chunks)
		rel = "objects/" + filepath.Base(chunks[rnd.IntN(len(chunks))])
	}
	file, err := env.StoreFile(path.Join(prefix, rel))
	if err != nil {
		return "", "", err
	}
	orig, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return "", "", fmt.Errorf("%w: %s/%s is not on disk", ErrUnavailable, id, rel)
	}
	if err != nil {
		return "", "", err
	}
	var garbage []byte
	how := form
	switch form {
	case FormRandom:
		garbage = make([]byte, max(len(orig), 1))
		fill(rnd, garbage)
		garbage[0] |= 0x80
	case FormTruncated:
		garbage = bytes.Clone(orig[:len(orig)/2])
	case FormWrongFields:
		garbage, how, err = objectWrongFields(ctx, env, rnd, t, rel, orig)
		if err != nil {
			return "", "", err
		}
	}
	if bytes.Equal(garbage, orig) {
		return "", "", fmt.Errorf("garbage for %s/%s equals its content", id, rel)
	}
	// Same file, truncated and rewritten: the server's metadata (its stored
	// checksum) stays as it was, as it would for rot behind its back.
	if err := os.WriteFile(file, garbage, 0o644); err != nil {
		return "", "", err
	}
	return fmt.Sprintf("%s %s/%s %s (%d bytes, was %d)", t.Slot, id, rel, how, len(garbage), len(orig)), id, nil
}

// objectWrongFields is the other pointer's snapshot's same-named object
// when it exists and differs; else a renamed field (JSON) or a flipped byte.
func objectWrongFields(ctx context.Context, env Env, rnd *rand.Rand, t GarbageTarget, rel string, orig []byte) ([]byte, string, error) {
	other := "fallback"
	if t.Slot == "fallback" {
		other = "latest"
	}
	if prefix, id, err := pointerPrefix(ctx, env, other); err == nil {
		if file, err := env.StoreFile(path.Join(prefix, rel)); err == nil {
			if b, err := os.ReadFile(file); err == nil && len(b) > 0 && !bytes.Equal(b, orig) {
				return b, "wrong-fields: " + other + " " + id + "'s " + rel, nil
			}
		}
	}
	if path.Ext(rel) == ".json" {
		b, err := renameField(rnd, orig)
		return b, "wrong-fields: a field renamed", err
	}
	if len(orig) == 0 {
		return nil, "", fmt.Errorf("%w: %s is empty", ErrUnavailable, rel)
	}
	b := bytes.Clone(orig)
	at := rnd.IntN(len(b))
	b[at] ^= 0x01
	return b, fmt.Sprintf("wrong-fields: byte %d flipped", at), nil
}

// pointerPrefix reads a pointer slot loosely: the artifact prefix (without
// its trailing '/') of the snapshot whose descriptor it names.
func pointerPrefix(ctx context.Context, env Env, slot string) (prefix, id string, err error) {
	raw, err := env.EtcdGet(ctx, pointerKey(env.Keyspace(), slot))
	if err != nil {
		return "", "", err
	}
	var p struct {
		ID         string `json:"snapshot_id"`
		Descriptor string `json:"descriptor_key"`
	}
	if raw == nil || json.Unmarshal(raw, &p) != nil || p.Descriptor == "" {
		return "", "", fmt.Errorf("%w: the %s pointer names no snapshot", ErrUnavailable, slot)
	}
	return path.Dir(p.Descriptor), p.ID, nil
}

func fill(rnd *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rnd.Uint32())
	}
}

// quote shows a value for the timeline: Go-quoted (bytes escaped), capped.
func quote(b []byte) string {
	const limit = 96
	s := []rune(strconv.Quote(string(b)))
	if len(s) > limit {
		return string(s[:limit]) + "…"
	}
	return string(s)
}
