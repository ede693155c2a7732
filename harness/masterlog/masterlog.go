// Package masterlog reads what a master said about itself: the warnings
// and errors in its process log, grouped by message shape (the message with
// its keys, addresses and numbers masked), counted, with their first and
// last time. It reads both kinds of master's logs: the reference master's
// JSON lines (log/slog) and upstream's glog lines ("W20261206 18:13:26.123456
// 4242 file.cpp:88] message", or with MMDD alone), so a report shows "169 × PutEnd: OpLog
// queue failed for key=…, err=-1002, 20.27–21.23 s" for either.
package masterlog

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Group is one message shape a node logged at one level.
type Group struct {
	Node  string `json:"node"`
	Level string `json:"level"` // WARN, ERROR, FATAL
	Shape string `json:"shape"`
	Count int    `json:"count"`
	// First and Last are the times of the first and last such line, since
	// the run started (ns).
	First int64 `json:"first_ns"`
	Last  int64 `json:"last_ns"`
	// Example is the first such line, whole (cut to 500 characters).
	Example string `json:"example"`
}

// Line is one warning or error a log held.
type Line struct {
	At      time.Time
	Level   string
	Message string
	Raw     string
}

// Parse reads one log line: ok is false for a line that is neither a
// warning nor an error of either format. year is the year glog's lines
// leave out (the run's).
func Parse(raw string, year int) (Line, bool) {
	if strings.HasPrefix(raw, "{") {
		var j struct {
			Time  time.Time `json:"time"`
			Level string    `json:"level"`
			Msg   string    `json:"msg"`
		}
		if err := json.Unmarshal([]byte(raw), &j); err != nil {
			return Line{}, false
		}
		switch j.Level {
		case "WARN", "ERROR":
			return Line{At: j.Time, Level: j.Level, Message: j.Msg, Raw: raw}, true
		}
		return Line{}, false
	}
	m := glogLine.FindStringSubmatch(raw)
	if m == nil {
		return Line{}, false
	}
	level := map[string]string{"W": "WARN", "E": "ERROR", "F": "FATAL"}[m[1]]
	if level == "" {
		return Line{}, false
	}
	date := m[2]
	if len(date) == 4 { // MMDD: the year is left out
		date = strconv.Itoa(year) + date
	}
	at, err := time.ParseInLocation("20060102 15:04:05.000000", date+" "+m[3], time.Local)
	if err != nil {
		return Line{}, false
	}
	return Line{At: at, Level: level, Message: m[4], Raw: raw}, true
}

// glogLine is glog's prefix: level letter, MMDD (or YYYYMMDD, as newer
// glogs write it), time, thread, file:line.
var glogLine = regexp.MustCompile(`^([IWEF])(\d{8}|\d{4}) (\d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ [^ \]]+\] ?(.*)$`)

// Shape is a message with what varies from line to line masked: the value
// of a key-like field (key=, segment=, path=…), addresses, long hex ids and
// numbers — but an error code (err=-1002, code=7) is kept, since it is
// what tells one failure from another.
func Shape(msg string) string {
	msg = namedValue.ReplaceAllString(msg, "$1=…")
	msg = address.ReplaceAllString(msg, "<addr>")
	msg = hexID.ReplaceAllString(msg, "<id>")
	// error codes are set aside while every other number is masked
	var codes []string
	msg = errorCode.ReplaceAllStringFunc(msg, func(c string) string {
		codes = append(codes, c)
		return "\x00"
	})
	msg = number.ReplaceAllString(msg, "N")
	for _, c := range codes {
		msg = strings.Replace(msg, "\x00", c, 1)
	}
	return msg
}

var (
	namedValue = regexp.MustCompile(`\b(key|keys|object|segment|segment_name|name|path|file|endpoint|addr|address|client_id|uuid|id)=("[^"]*"|[^,;\s]+)`)
	address    = regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b`)
	hexID      = regexp.MustCompile(`\b[0-9a-f]{12,}\b`)
	errorCode  = regexp.MustCompile(`(?i)\b(err|error|code|ec|errno|status|rc|ret)=-?\d+`)
	number     = regexp.MustCompile(`\d+`)
)

// Summarize groups the warnings and errors of every master log under
// dir (logs/masters/<node>.log in a bundle) by node, level and shape,
// most frequent first; times are since started.
func Summarize(dir string, started time.Time) ([]Group, error) {
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, err
	}
	type key struct{ node, level, shape string }
	groups := map[key]*Group{}
	for _, path := range logs {
		node := strings.TrimSuffix(filepath.Base(path), ".log")
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			l, ok := Parse(sc.Text(), started.Year())
			if !ok {
				continue
			}
			k := key{node, l.Level, Shape(l.Message)}
			at := l.At.Sub(started).Nanoseconds()
			g, ok := groups[k]
			if !ok {
				ex := l.Raw
				if len(ex) > 500 {
					ex = ex[:500] + "…"
				}
				g = &Group{Node: node, Level: l.Level, Shape: k.shape, First: at, Example: ex}
				groups[k] = g
			}
			g.Count++
			g.First, g.Last = min(g.First, at), max(g.Last, at)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	out := make([]Group, 0, len(groups))
	for _, g := range groups {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		if out[i].First != out[j].First {
			return out[i].First < out[j].First
		}
		return out[i].Node < out[j].Node
	})
	return out, nil
}
