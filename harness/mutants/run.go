package mutants

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Verdicts.
const (
	Killed   = "killed"    // a named scenario failed
	TestOnly = "test-only" // no scenario failed, a package test did: a harness gap
	Survived = "SURVIVED"  // nothing failed
	Invalid  = "invalid"   // the patch does not apply or the tree does not build
)

// Outcome is what one mutant did.
type Outcome struct {
	Mutant   string        `json:"mutant"`
	Where    string        `json:"where"`
	Verdict  string        `json:"verdict"`
	By       string        `json:"by,omitempty"`       // "scenario X" or "test P"
	Evidence []string      `json:"evidence,omitempty"` // what failed (audits, steps, test names)
	Bundle   string        `json:"bundle,omitempty"`   // the failing (or, for a survivor, last) bundle
	Replay   *Replay       `json:"replay,omitempty"`   // with Runner.Replay: the killing bundle replayed
	Took     time.Duration `json:"took_ns"`
}

// Replay is what chaos replay made of a killing bundle, run against the
// same mutated tree.
type Replay struct {
	Reproduced bool          `json:"reproduced"`         // the replay failed first on the original's first failing audit
	Was        string        `json:"was,omitempty"`      // the original's first failing audit ("" when unknown)
	Now        string        `json:"now,omitempty"`      // the replay's first failing audit ("" when it passed)
	Verdict    string        `json:"verdict"`            // the replay's REPRODUCED / NOT reproduced line, or why there is none
	Landed     string        `json:"landed,omitempty"`   // "k of n faults landed on the original's event"
	Timeline   string        `json:"timeline,omitempty"` // the replay's fault timeline line
	Bundle     string        `json:"bundle,omitempty"`   // the replay's bundle
	Took       time.Duration `json:"took_ns"`
}

// Runner applies mutants to copies of Root and runs what they name.
type Runner struct {
	Root string    // the repository (its tracked and untracked, not ignored, files are copied)
	Work string    // where copies go (one per mutant, removed after)
	Out  string    // bundles of the scenarios run
	Log  io.Writer // progress lines
	// Replay: after a scenario kills the mutant, replay its bundle with
	// chaos replay in the same mutated copy (so it builds the same master)
	// and record whether the replay fails first on the same audit.
	Replay bool
}

// Run applies m, builds, and runs its scenarios, then (only when none
// failed) its tests.
func (r *Runner) Run(ctx context.Context, m Mutant) (o Outcome) {
	start := time.Now()
	o = Outcome{Mutant: m.Name, Where: m.Where}
	defer func() { o.Took = time.Since(start) }()
	dir := filepath.Join(r.Work, m.Name)
	_ = os.RemoveAll(dir)
	defer os.RemoveAll(dir)
	if err := r.copyTree(ctx, dir); err != nil {
		o.Verdict, o.Evidence = Invalid, []string{"copy: " + err.Error()}
		return o
	}
	if out, err := r.cmd(ctx, dir, "git", "apply", "--whitespace=nowarn", m.Path).CombinedOutput(); err != nil {
		o.Verdict, o.Evidence = Invalid, []string{"git apply: " + strings.TrimSpace(string(out))}
		return o
	}
	if out, err := r.cmd(ctx, dir, "go", "build", "-o", ".cache/chaos", "./cmd/chaos").CombinedOutput(); err != nil {
		o.Verdict, o.Evidence = Invalid, []string{"build: " + strings.TrimSpace(string(out))}
		return o
	}
	if out, err := r.cmd(ctx, dir, "go", "vet", "./impl/...").CombinedOutput(); err != nil {
		o.Verdict, o.Evidence = Invalid, []string{"vet: " + strings.TrimSpace(string(out))}
		return o
	}
	for _, sc := range m.Scenarios {
		r.logf("%s: scenario %s", m.Name, sc)
		out := filepath.Join(r.Out, m.Name)
		res, err := r.cmd(ctx, dir, filepath.Join(dir, ".cache/chaos"), "run", filepath.Join("scenarios/pr", sc+".yaml"), "--out", out, "--keep").CombinedOutput()
		if ctx.Err() != nil {
			o.Verdict, o.Evidence = Invalid, []string{ctx.Err().Error()}
			return o
		}
		ev, bundle := runEvidence(res)
		o.Bundle = bundle
		if err != nil {
			o.Verdict, o.By, o.Evidence = Killed, "scenario "+sc, ev
			if r.Replay {
				o.Replay = r.replay(ctx, m, dir, bundle)
			}
			return o
		}
	}
	for _, pkg := range m.Tests {
		r.logf("%s: test %s", m.Name, pkg)
		res, err := r.cmd(ctx, dir, "go", "test", "-count=1", pkg).CombinedOutput()
		if err != nil {
			o.Verdict, o.By, o.Evidence = TestOnly, "test "+pkg, testEvidence(res)
			return o
		}
	}
	o.Verdict = Survived
	return o
}

// replay runs chaos replay on a killing bundle inside the mutated copy dir:
// the replay builds ./cmd/master from the project root it finds from its
// working directory, which is the copy, so it runs the same mutant.
func (r *Runner) replay(ctx context.Context, m Mutant, dir, bundle string) *Replay {
	start := time.Now()
	if bundle == "" {
		return &Replay{Verdict: "no bundle to replay", Took: time.Since(start)}
	}
	r.logf("%s: replay %s", m.Name, bundle)
	out := filepath.Join(r.Out, m.Name, "replay")
	res, err := r.cmd(ctx, dir, filepath.Join(dir, ".cache/chaos"), "replay", bundle, "--out", out, "--keep").CombinedOutput()
	rp := replayEvidence(res)
	rp.Took = time.Since(start)
	if rp.Verdict == "" {
		rp.Verdict = "no verdict from chaos replay"
		if err != nil {
			rp.Verdict += ": " + err.Error()
		}
		if l := lastLines(string(res), 2); len(l) > 0 {
			rp.Verdict += ": " + strings.Join(l, " / ")
		}
	}
	r.logf("%s: replay: %s", m.Name, rp.Verdict)
	return rp
}

// replayEvidence picks chaos replay's verdict out of its output: the
// REPRODUCED / NOT reproduced line (with the two first failing audits), how
// many faults landed on their events, the timeline line, and the new bundle.
func replayEvidence(out []byte) *Replay {
	rp := &Replay{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		t := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(t, "PASS ") || strings.HasPrefix(t, "FAIL "):
			if _, b, ok := strings.Cut(t, "bundle: "); ok {
				rp.Bundle = strings.Fields(b)[0]
			}
		case strings.HasPrefix(t, "REPRODUCED: the replay fails first on "):
			x := strings.TrimPrefix(t, "REPRODUCED: the replay fails first on ")
			x = strings.TrimSuffix(x, ", as the original did")
			rp.Reproduced, rp.Was, rp.Now, rp.Verdict = true, x, x, t
		case strings.HasPrefix(t, "NOT reproduced: the original failed first on "):
			x := strings.TrimPrefix(t, "NOT reproduced: the original failed first on ")
			was, now, _ := strings.Cut(x, ", the replay on ")
			if u, err := strconv.Unquote(now); err == nil {
				now = u
			}
			rp.Reproduced, rp.Was, rp.Now, rp.Verdict = false, was, now, t
		case t == "the original passed":
			rp.Reproduced, rp.Verdict = false, t
		case strings.HasSuffix(t, "faults landed on the original's event"):
			rp.Landed = t
		case strings.HasPrefix(t, "fault timeline"):
			rp.Timeline = strings.TrimSuffix(t, ":")
		}
	}
	return rp
}

// Cell is the replay's column of the table.
func (rp *Replay) Cell() string {
	switch {
	case rp == nil:
		return ""
	case rp.Reproduced:
		return "reproduced (" + rp.Was + ")"
	case rp.Was != "" || rp.Now != "":
		now := rp.Now
		if now == "" {
			now = "none: the replay passed"
		}
		return fmt.Sprintf("not (first failing %s vs %s)", rp.Was, now)
	default:
		return "not (" + rp.Verdict + ")"
	}
}

// ReplaySummary is "N of M failures reproduced by replay (P %)" over the
// outcomes that were replayed, or "" when none was.
func ReplaySummary(os []Outcome) string {
	n, k := 0, 0
	for _, o := range os {
		if o.Replay == nil {
			continue
		}
		n++
		if o.Replay.Reproduced {
			k++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d failures reproduced by replay (%d %%)", k, n, k*100/n)
}

func (r *Runner) cmd(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, name, args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	c.WaitDelay = 10 * time.Second
	return c
}

func (r *Runner) logf(format string, args ...any) {
	if r.Log != nil {
		fmt.Fprintf(r.Log, "[mutants] "+format+"\n", args...)
	}
}

// copyTree copies the repository's files (tracked, and untracked ones git
// does not ignore) into dir.
func (r *Runner) copyTree(ctx context.Context, dir string) error {
	list, err := r.cmd(ctx, r.Root, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		if f == "" {
			continue
		}
		src := filepath.Join(r.Root, f)
		fi, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// runEvidence picks what failed out of chaos run's output: the failing
// audits with their first evidence line, and steps that did not complete;
// and the bundle it wrote.
func runEvidence(out []byte) (ev []string, bundle string) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	lastFail := false
	for sc.Scan() {
		t := sc.Text()
		switch {
		case strings.HasPrefix(t, "PASS ") || strings.HasPrefix(t, "FAIL "):
			if _, b, ok := strings.Cut(t, "bundle: "); ok {
				bundle = strings.Fields(b)[0]
			}
		case strings.HasPrefix(t, "  FAIL "):
			ev = append(ev, strings.Join(strings.Fields(t)[1:2], ""))
			lastFail = true
			continue
		case lastFail && strings.HasPrefix(t, "       "):
			if n := len(ev); n > 0 && !strings.Contains(ev[n-1], ": ") {
				ev[n-1] += ": " + strings.TrimSpace(t)
			}
			continue
		}
		lastFail = false
	}
	return ev, bundle
}

// testEvidence picks the failing test names out of go test's output.
func testEvidence(out []byte) []string {
	var ev []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--- FAIL: ") {
			ev = append(ev, strings.TrimSpace(l))
		}
	}
	if len(ev) == 0 {
		ev = append(ev, lastLines(string(out), 3)...)
	}
	return ev
}

func lastLines(s string, n int) []string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return ls
}

// Table renders outcomes as Markdown.
func Table(os []Outcome) string {
	replayed := false
	for _, o := range os {
		replayed = replayed || o.Replay != nil
	}
	var b strings.Builder
	if replayed {
		b.WriteString("| mutant | where | verdict | killed by | what failed | replay | time |\n|---|---|---|---|---|---|---|\n")
	} else {
		b.WriteString("| mutant | where | verdict | killed by | what failed | time |\n|---|---|---|---|---|---|\n")
	}
	for _, o := range os {
		ev := strings.Join(o.Evidence, "; ")
		if len(ev) > 200 {
			ev = ev[:200] + "…"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |", o.Mutant, o.Where, o.Verdict, o.By, strings.ReplaceAll(ev, "|", "\\|"))
		if replayed {
			fmt.Fprintf(&b, " %s |", strings.ReplaceAll(o.Replay.Cell(), "|", "\\|"))
		}
		fmt.Fprintf(&b, " %s |\n", o.Took.Round(time.Second))
	}
	return b.String()
}
