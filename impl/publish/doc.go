// Package publish owns the fenced publication protocol of RFC N04: the
// maintenance lease and its /snapshot/maintenance owner token, the two
// independently parseable pointer records, and the one transaction that
// rotates them — comparing the writer token and the raw observed values of
// both slots, so a lost lease, a concurrent publication or a concurrent
// repair is a clean CAS failure and never an overwrite. Pointer cursors never
// regress, a malformed latest is repaired only by a newer verified
// candidate, and malformed data is never copied into a valid slot.
package publish
