package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/leak"
	"github.com/oplogha/oplogha/harness/runner"
	"github.com/oplogha/oplogha/harness/scenario"
)

// captureGate runs the gate over paths and returns its verdict and output.
func captureGate(t *testing.T, paths ...string) (error, string) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	gerr := cmdGate(context.Background(), paths)
	os.Stdout = stdout
	w.Close()
	return gerr, <-done
}

// TestGateFailsOnALeakPlantedInARealBundle runs a real scenario, then
// plants into copies of its bundle what the log audit must catch — a
// secret of the run in a process log, a tenant key in a process log, a
// private key in the bundle — and shows the gate, which reads the bundle
// again rather than trusting the recorded verdict, refuses each.
func TestGateFailsOnALeakPlantedInARealBundle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cache, err := bin.NewCache(".", nil)
	require.NoError(t, err)
	sc, err := scenario.Load("../../scenarios/testdata/tiny-failover.yaml")
	require.NoError(t, err)
	o, err := runner.Run(ctx, sc, runner.Options{Out: t.TempDir(), Cache: cache, Keep: true})
	require.NoError(t, err)
	require.True(t, o.Pass, "the clean run passes")
	gerr, out := captureGate(t, o.Dir)
	require.NoError(t, gerr, out)

	b, err := bundle.Open(o.Dir)
	require.NoError(t, err)
	require.NotEmpty(t, b.Input.Ops)
	key := b.Input.Ops[len(b.Input.Ops)/2].Key

	plant := func(t *testing.T, edit func(dir string)) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "bundle")
		require.NoError(t, exec.Command("cp", "-a", o.Dir, dir).Run())
		edit(dir)
		gerr, out := captureGate(t, dir)
		require.ErrorIs(t, gerr, errFailed, out)
		require.Contains(t, out, "log-audit (gate's own reading) failed")
		return out
	}
	appendTo := func(t *testing.T, path, line string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString(line + "\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	masterLog := filepath.Join("logs", "masters", "master-0.log")

	t.Run("a secret of the run in a master's log", func(t *testing.T) {
		out := plant(t, func(dir string) {
			// A secret the run knew, recorded the way the runner records
			// its own: salted hash in secrets.json.
			const secret = "5e884898da28047151d0e56f8dc6292773603d0d"
			var s leak.Secrets
			data, err := os.ReadFile(filepath.Join(dir, bundle.SecretsFile))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &s))
			sum := sha256.Sum256([]byte(s.Salt + secret))
			s.Hashed = append(s.Hashed, leak.Hashed{Len: len(secret), SHA256: hex.EncodeToString(sum[:])})
			require.NoError(t, bundle.WriteJSON(dir, bundle.SecretsFile, s))
			appendTo(t, filepath.Join(dir, masterLog), `{"level":"DEBUG","msg":"s3 config","secret_key":"`+secret+`"}`)
		})
		require.Contains(t, out, masterLog)
		require.Contains(t, out, "a secret of the run")
	})
	t.Run("a tenant key in a master's log", func(t *testing.T) {
		out := plant(t, func(dir string) {
			appendTo(t, filepath.Join(dir, masterLog), `{"level":"INFO","msg":"put","object":"`+key+`"}`)
		})
		require.Contains(t, out, "tenant key")
	})
	t.Run("a segment name in a master's log, named as one", func(t *testing.T) {
		var segment string
		for _, op := range b.Input.Ops {
			if op.Kind == history.Mount {
				segment = op.Key
			}
		}
		require.NotEmpty(t, segment, "the run mounts its segments")
		out := plant(t, func(dir string) {
			appendTo(t, filepath.Join(dir, masterLog), `{"level":"WARN","msg":"remount","segment":"`+segment+`"}`)
		})
		require.Contains(t, out, "segment name \""+segment+"\"")
		require.NotContains(t, out, "tenant key \""+segment+"\"")
	})
	t.Run("a private key anywhere in the bundle", func(t *testing.T) {
		out := plant(t, func(dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n"), 0o644))
		})
		require.Contains(t, out, "notes.txt")
	})
	t.Run("no secrets.json", func(t *testing.T) {
		out := plant(t, func(dir string) { require.NoError(t, os.Remove(filepath.Join(dir, bundle.SecretsFile))) })
		require.True(t, strings.Contains(out, "secrets.json"), out)
	})
}
