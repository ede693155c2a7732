package bin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// BuildProject builds one of the project's own commands (e.g. "./cmd/master")
// into out, with build tags when given, and returns the binary's SHA-256.
// Each run builds the master it tests from the tree it runs in; but go
// build links again whenever its output is a new file (about 2 s of CPU for
// the master, on every run of a tier), and leaves alone an output it finds
// up to date with the tree. So the command is built into one file per
// command and tags under the tree's .cache/build, under a lock (parallel
// runs and test processes build the same file), and copied from there.
func (c *Cache) BuildProject(ctx context.Context, pkg, out string, tags ...string) (string, error) {
	name := filepath.Base(pkg)
	if len(tags) > 0 {
		name += "+" + strings.Join(tags, "+")
	}
	built := filepath.Join(c.Root, ".cache", "build", name)
	if err := os.MkdirAll(filepath.Dir(built), 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(ctx, built+".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	args := []string{"build", "-o", built}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = c.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build %s: %v: %s", pkg, err, strings.TrimSpace(buf.String()))
	}
	if err := copyExecutable(built, out); err != nil {
		return "", fmt.Errorf("build %s: %w", pkg, err)
	}
	return c.SHA256(built)
}

// copyExecutable copies src to dst through a file beside dst, renamed into
// place once complete.
func copyExecutable(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + fmt.Sprintf(".tmp-%d", os.Getpid())
	defer os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, in); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// fileSum is a file's SHA-256 as of its size and modification time.
type fileSum struct {
	size int64
	mod  time.Time
	sum  string
}

// SHA256 is the hex SHA-256 of a file (a binary, for the bundle and the
// images), remembered while the file keeps its size and modification time:
// every run of a tier records the same tools.
func (c *Cache) SHA256(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	s, ok := c.sums[path]
	c.mu.Unlock()
	if ok && s.size == fi.Size() && s.mod.Equal(fi.ModTime()) {
		return s.sum, nil
	}
	sum, err := FileSHA256(path)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if c.sums == nil {
		c.sums = map[string]fileSum{}
	}
	c.sums[path] = fileSum{size: fi.Size(), mod: fi.ModTime(), sum: sum}
	c.mu.Unlock()
	return sum, nil
}

// FileSHA256 is the hex SHA-256 of a file.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
