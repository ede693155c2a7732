package legacysnap

import (
	"fmt"
	"math"
)

// decodeTasks reads the task_manager file (task_manager.cpp
// TaskManagerSerializer): one zstd frame of [[id, type, status, payload,
// created_ms, updated_ms, message, assigned_client]...]. Upstream's restore
// fails without this file. Upstream's decoder skips a task it cannot parse;
// no upstream writer produces one, so this reader refuses the file instead.
func decodeTasks(file string, compressed []byte, fr *frames, d *Decoded) error {
	plain, err := fr.open(file, "the file", compressed, MaxFrameBytes)
	if err != nil {
		return err
	}
	w := newWire(file, plain)
	n, err := w.arrayLen("the task list")
	if err != nil {
		return err
	}
	for i := range n {
		where := fmt.Sprintf("task %d", i)
		if err := w.arrayOf(where, 8); err != nil {
			return err
		}
		var t Task
		if t.ID, err = w.uuid(where + " id"); err != nil {
			return err
		}
		typ, err := w.int(where+" type", math.MinInt32, math.MaxInt32)
		if err != nil {
			return err
		}
		st, err := w.int(where+" status", math.MinInt32, math.MaxInt32)
		if err != nil {
			return err
		}
		t.Type, t.Status = int32(typ), int32(st)
		if t.Payload, err = w.str(where + " payload"); err != nil {
			return err
		}
		if t.CreatedMS, err = w.int(where+" created_at", math.MinInt64, math.MaxInt64); err != nil {
			return err
		}
		if t.UpdatedMS, err = w.int(where+" last_updated_at", math.MinInt64, math.MaxInt64); err != nil {
			return err
		}
		if t.Message, err = w.str(where + " message"); err != nil {
			return err
		}
		if t.AssignedClient, err = w.uuid(where + " assigned_client"); err != nil {
			return err
		}
		d.Tasks = append(d.Tasks, t)
	}
	return w.end()
}
