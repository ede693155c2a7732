// Package importgraph holds the harness to the rule that it reads what the
// system left behind through the contract (impl/contract and its
// subpackages, such as impl/contract/legacysnap), not through the
// implementation it judges.
package importgraph

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/oplogha/oplogha/"

// TestHarnessReadsImplOnlyThroughTheContract: no harness or faults package
// imports an impl package outside impl/contract. The records the harness
// judges (keys, batches, prefix, view, floor, pointer, snapshot id, import
// record, import batch, the snapshot's descriptor, manifest, segments and
// object chunks) and the legacy layout of a fixture are
// read through the contract; the operator's verifier the runner runs on
// every namespace is impl/contract/verify, contract only like every package
// under impl/contract (TestContractImportsOnlyTheContract), so its verdict
// is not the implementation's opinion of itself. The harness makes buckets
// and reads the store with its own clients (harness/s3server,
// harness/objects); tests that drive the master's store backend on a
// harness server connect it through tests/s3store.
func TestHarnessReadsImplOnlyThroughTheContract(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, top := range []string{"harness", "faults"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				p, ok := strings.CutPrefix(p, module)
				if !ok || !strings.HasPrefix(p, "impl/") || isContract(p) {
					continue
				}
				t.Errorf("%s imports %s: the harness reads what the system left through impl/contract; move the record there", filepath.ToSlash(mustRel(root, path)), p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// isContract reports whether p is the contract: impl/contract or a package
// under it (impl/contract/legacysnap), which is held to the same rule of
// importing nothing of impl but the contract (TestContractImportsOnlyTheContract).
func isContract(p string) bool {
	return p == "impl/contract" || strings.HasPrefix(p, "impl/contract/")
}

// The contract's subpackages count as the contract only because they are
// pure contract themselves: no package under impl/contract imports an impl
// package outside it, so the harness cannot reach the implementation
// through one.
func TestContractImportsOnlyTheContract(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(filepath.Join(root, "impl", "contract"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		n++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p, ok := strings.CutPrefix(p, module); ok && !isContract(p) {
				t.Errorf("%s imports %s: the contract imports nothing of this module outside impl/contract", filepath.ToSlash(mustRel(root, path)), p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no contract source found")
	}
}

func mustRel(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return r
}
