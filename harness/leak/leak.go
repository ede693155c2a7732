// Package leak finds what must never be written down: the run's secrets in
// any file of a bundle, private keys and signed S3 requests anywhere, and
// client data (tenant keys, batch payloads) in any process log (RFC
// "Security and Access Control": do not log credentials, signed URLs,
// payload content or tenant keys).
//
// Secrets are known by salted SHA-256 only, so a bundle can say what to
// look for without holding it: every secret the harness makes is hex, and
// the scan hashes each window of a secret's length inside every run of hex
// digits of the text.
package leak

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Hashed is one secret as a bundle records it.
type Hashed struct {
	Len    int    `json:"len"`
	SHA256 string `json:"sha256"` // of salt + secret
}

// Secrets is secrets.json: what the scan looks for, without the secrets.
type Secrets struct {
	Salt   string   `json:"salt"`
	Hashed []Hashed `json:"hashed"`
}

// Hash records secrets under a fresh salt. A secret that is not hex (or
// shorter than 16) cannot be found by the hex-run scan: it is refused, so a
// caller never believes a secret is watched when it is not.
func Hash(secrets []string) (Secrets, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return Secrets{}, err
	}
	s := Secrets{Salt: hex.EncodeToString(salt)}
	seen := map[string]bool{}
	for _, sec := range secrets {
		if len(sec) < 16 || !isHex(sec) {
			return Secrets{}, fmt.Errorf("leak: a secret of %d bytes is not hex of 16 or more digits: the scan could not find it", len(sec))
		}
		h := s.hash(strings.ToLower(sec))
		if !seen[h] {
			seen[h] = true
			s.Hashed = append(s.Hashed, Hashed{Len: len(sec), SHA256: h})
		}
	}
	return s, nil
}

func (s Secrets) hash(v string) string {
	sum := sha256.Sum256([]byte(s.Salt + v))
	return hex.EncodeToString(sum[:])
}

func isHex(v string) bool {
	for i := 0; i < len(v); i++ {
		if !isHexByte(v[i]) {
			return false
		}
	}
	return true
}

func isHexByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Finding is one leak.
type Finding struct {
	File string `json:"file"` // relative to the scanned root
	Line int    `json:"line"`
	What string `json:"what"`
}

func (f Finding) String() string { return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.What) }

// patterns are leaks whatever the run: key material and signed requests.
var patterns = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`), "a PEM private key"},
	{regexp.MustCompile(`(?i)X-Amz-Signature=[0-9a-f]{16}`), "a presigned S3 URL (X-Amz-Signature)"},
	{regexp.MustCompile(`(?i)X-Amz-Credential=[A-Za-z0-9]`), "a presigned S3 URL (X-Amz-Credential)"},
	{regexp.MustCompile(`AWS4-HMAC-SHA256 Credential=`), "an S3 Authorization header"},
	{regexp.MustCompile(`(?i)"?(secret_access_key|secretaccesskey|password)"?\s*[:=]\s*"?[0-9a-f]{16}`), "a credential assignment"},
}

// Needles are client data that must not appear in process logs: each a
// string of at least MinNeedle bytes, with what to call it when found.
type Needles struct {
	byPrefix map[uint64][]int
	values   []string
	names    []string
	Skipped  int // shorter than MinNeedle: not searched
}

// MinNeedle is the shortest client datum searched for (shorter ones would
// match by chance).
const MinNeedle = 8

// Add adds one needle.
func (n *Needles) Add(value, name string) {
	if len(value) < MinNeedle {
		n.Skipped++
		return
	}
	if n.byPrefix == nil {
		n.byPrefix = map[uint64][]int{}
	}
	k := binary.LittleEndian.Uint64([]byte(value[:8]))
	n.byPrefix[k] = append(n.byPrefix[k], len(n.values))
	n.values = append(n.values, value)
	n.names = append(n.names, name)
}

// Len is how many needles are searched.
func (n *Needles) Len() int { return len(n.values) }

func (n *Needles) find(line string) (string, bool) {
	if len(n.values) == 0 {
		return "", false
	}
	for i := 0; i+8 <= len(line); i++ {
		for _, j := range n.byPrefix[binary.LittleEndian.Uint64([]byte(line[i:i+8]))] {
			if strings.HasPrefix(line[i:], n.values[j]) {
				return n.names[j], true
			}
		}
	}
	return "", false
}

// Scan reads every file under root: secrets and patterns in all of them,
// needles in those whose relative path starts with one of logDirs.
// Findings are capped per file at 5; files reports how many were read.
func Scan(root string, secrets Secrets, needles *Needles, logDirs ...string) (findings []Finding, files int, err error) {
	lens := map[int]bool{}
	want := map[string]bool{}
	for _, h := range secrets.Hashed {
		lens[h.Len], want[h.SHA256] = true, true
	}
	var sortedLens []int
	for l := range lens {
		sortedLens = append(sortedLens, l)
	}
	sort.Ints(sortedLens)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		inLogs := false
		for _, l := range logDirs {
			if strings.HasPrefix(rel, l+string(filepath.Separator)) {
				inLogs = true
			}
		}
		files++
		fs, err := scanFile(path, rel, secrets, sortedLens, want, needles, inLogs)
		findings = append(findings, fs...)
		return err
	})
	return findings, files, err
}

func scanFile(path, rel string, secrets Secrets, lens []int, want map[string]bool, needles *Needles, inLogs bool) ([]Finding, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Finding
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan() && len(out) < 5; n++ {
		line := sc.Text()
		for _, p := range patterns {
			if p.re.MatchString(line) {
				out = append(out, Finding{rel, n, p.what})
				break // one pattern finding per line
			}
		}
		if len(want) > 0 {
			if i, ok := findSecret(line, secrets, lens, want); ok {
				out = append(out, Finding{rel, n, fmt.Sprintf("a secret of the run (%d hex digits)", i)})
			}
		}
		if inLogs && needles != nil {
			if name, ok := needles.find(line); ok {
				out = append(out, Finding{rel, n, name})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("leak: %s: %w", rel, err)
	}
	return out, nil
}

// findSecret hashes every window of each secret length inside each hex run
// of line.
func findSecret(line string, secrets Secrets, lens []int, want map[string]bool) (int, bool) {
	for i := 0; i < len(line); {
		if !isHexByte(line[i]) {
			i++
			continue
		}
		j := i
		for j < len(line) && isHexByte(line[j]) {
			j++
		}
		run := strings.ToLower(line[i:j])
		for _, l := range lens {
			for k := 0; k+l <= len(run); k++ {
				if want[secrets.hash(run[k:k+l])] {
					return l, true
				}
			}
		}
		i = j
	}
	return 0, false
}
