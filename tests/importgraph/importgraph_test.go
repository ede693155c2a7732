// Package importgraph holds the harness to the rule that it reads what the
// system left behind through the contract (impl/contract and its
// subpackages, such as impl/contract/legacysnap), not through the
// implementation it judges: every other impl package a harness or faults
// package imports is listed here, with why, and the list may only shrink.
package importgraph

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/oplogha/oplogha/"

// allowed lists, per importing package (a directory of the repository),
// the impl packages besides the contract (impl/contract and its
// subpackages) it may import, and why. What is left is what the harness
// does, not what it decodes: it runs the operator's verifier (which imports
// nothing of impl but the contract and opens each pointer's snapshot
// through it), and the S3 server hands out the implementation's store
// configuration. The harness reads the store with its own client
// (harness/objects). The records it judges (keys, batches, prefix, view, floor,
// pointer, snapshot id, checksum string, import record, import batch, the
// snapshot's descriptor, manifest, envelope header and object names) and
// the legacy layout of a fixture it reads are all read through the
// contract. Each entry goes when its reason does.
var allowed = map[string]map[string]string{
	"harness/runner": {
		"impl/verify": "the operator's verifier (oplogctl verify), run on every run's namespace",
	},
	"harness/s3server": {
		"impl/objstore":    "the store client configuration the server hands out",
		"impl/objstore/s3": "the S3 store client configuration",
	},
}

func TestHarnessReadsImplOnlyThroughTheContract(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]map[string]bool{}
	for _, top := range []string{"harness", "faults"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			rel = filepath.ToSlash(rel)
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				p, ok := strings.CutPrefix(p, module)
				if !ok || !strings.HasPrefix(p, "impl/") || isContract(p) {
					continue
				}
				if found[rel] == nil {
					found[rel] = map[string]bool{}
				}
				found[rel][p] = true
				if _, ok := allowed[rel][p]; !ok {
					t.Errorf("%s imports %s: the harness reads what the system left through impl/contract; move the record there (or, with a reason, list it in allowed)", filepath.ToSlash(mustRel(root, path)), p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var stale []string
	for pkg, imps := range allowed {
		for p := range imps {
			if !found[pkg][p] {
				stale = append(stale, pkg+" → "+p)
			}
		}
	}
	sort.Strings(stale)
	for _, s := range stale {
		t.Errorf("allowed lists %s, which is no longer imported: remove it (the list only shrinks)", s)
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

// The verifier the harness runs on every namespace reads only through the
// contract: it imports no impl package but the contract, so its verdict is
// not the implementation's opinion of itself.
func TestVerifierImportsOnlyTheContract(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "impl", "verify", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no verifier source: %v", err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p, ok := strings.CutPrefix(p, module); ok && !isContract(p) {
				t.Errorf("%s imports %s: the verifier reads only through the contract", filepath.ToSlash(mustRel(root, path)), p)
			}
		}
	}
}
