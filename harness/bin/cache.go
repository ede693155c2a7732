package bin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrProxyUnreachable says a build needed the Go module proxy and could not reach it.
var ErrProxyUnreachable = errors.New("the Go module proxy cannot be reached")

// Cache builds tools on first use and reuses them afterwards.
type Cache struct {
	Dir      string    // where binaries live: <Dir>/<name>-<version>
	Root     string    // project root (holds go.mod)
	Progress io.Writer // build progress lines; nil for silence

	mu   sync.Mutex
	sums map[string]fileSum // by path: SHA256's memory
}

// DefaultDir is $OPLOGHA_CACHE, else $XDG_CACHE_HOME/oplogha/bin, else
// ~/.cache/oplogha/bin, else .cache/bin under the project root.
func DefaultDir(root string) string {
	if d := os.Getenv("OPLOGHA_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "oplogha", "bin")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".cache", "oplogha", "bin")
	}
	return filepath.Join(root, ".cache", "bin")
}

// NewCache returns a cache for the project that holds dir (usually ".").
func NewCache(dir string, progress io.Writer) (*Cache, error) {
	root, err := ProjectRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Cache{Dir: DefaultDir(root), Root: root, Progress: progress}, nil
}

// Binary is a built tool.
type Binary struct {
	Name, Version, Path string
}

// Path returns the path of tool name, building it if the cache lacks it.
func (c *Cache) Path(ctx context.Context, name string) (Binary, error) {
	t, err := Lookup(name)
	if err != nil {
		return Binary{}, err
	}
	versions, err := PinnedVersions(c.Root)
	if err != nil {
		return Binary{}, err
	}
	b := Binary{Name: name, Version: versions[name]}
	b.Path = filepath.Join(c.Dir, name+"-"+b.Version)
	if isExecutable(b.Path) {
		return b, nil
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return Binary{}, fmt.Errorf("tool cache: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(c.Dir, ".lock-"+name))
	if err != nil {
		return Binary{}, err
	}
	defer unlock()
	if isExecutable(b.Path) { // another run built it while we waited
		return b, nil
	}
	return b, c.build(ctx, t, b)
}

// All builds (or finds) every tool.
func (c *Cache) All(ctx context.Context) ([]Binary, error) {
	var out []Binary
	for _, t := range Tools {
		b, err := c.Path(ctx, t.Name)
		if err != nil {
			return out, err
		}
		out = append(out, b)
	}
	return out, nil
}

func (c *Cache) build(ctx context.Context, t Tool, b Binary) error {
	start := time.Now()
	c.printf("building %s %s …\n", t.Name, b.Version)
	tmp := b.Path + fmt.Sprintf(".tmp-%d", os.Getpid())
	defer os.Remove(tmp)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", tmp, t.Package)
	cmd.Dir = c.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("building %s: %w", t.Name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(15 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return buildError(t, b, out.String(), err)
			}
			if err := os.Rename(tmp, b.Path); err != nil {
				return fmt.Errorf("building %s: %w", t.Name, err)
			}
			c.printf("built %s %s in %.0fs → %s\n", t.Name, b.Version, time.Since(start).Seconds(), b.Path)
			return nil
		case <-tick.C:
			c.printf("  … still building %s (%.0fs)\n", t.Name, time.Since(start).Seconds())
		}
	}
}

func (c *Cache) printf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format, args...)
	}
}

// buildError turns go build's output into one clear line: the line that
// names the network failure when there is one, else the first line that is
// not progress chatter.
func buildError(t Tool, b Binary, out string, err error) error {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	first := ""
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "go: downloading") {
			first = l
			break
		}
	}
	for _, sign := range []string{"dial tcp", "no such host", "i/o timeout", "connection refused", "proxyconnect",
		"TLS handshake timeout", "network is unreachable"} {
		for _, l := range lines {
			if strings.Contains(l, sign) {
				proxy := os.Getenv("GOPROXY")
				if proxy == "" {
					proxy = "default"
				}
				return fmt.Errorf("building %s %s: %w (GOPROXY=%s): %s", t.Name, b.Version, ErrProxyUnreachable, proxy, strings.TrimSpace(l))
			}
		}
	}
	return fmt.Errorf("building %s %s: %v: %s", t.Name, b.Version, err, first)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// lockFile takes an exclusive flock on path, waiting until ctx is done.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
