package s3server

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Request is one request of a server's access log, without who sent it.
type Request struct {
	Op     string // the S3 operation as the server names it, e.g. s3_PutObject
	Key    string // the object key ("-" for none)
	Status int    // the HTTP status answered
	// At is when the server logged the request, to the second (the log's
	// resolution); zero when the line's time does not parse.
	At time.Time
}

// accessLogTime is the layout of an access log line's time, between its
// brackets ("06/December/2026:08:32:46 +0000").
const accessLogTime = "02/January/2006:15:04:05 -0700"

// ErrAccessLog: a line of the access log is not in the format it should be.
var ErrAccessLog = errors.New("malformed access log line")

// ReadAccessLog reads the requests of an S3 server access log (versitygw's:
// owner, bucket, [time], remote ip, requester, request id, operation, key,
// request-URI, status, …, one request per line, after a "log starts" line)
// whose key keep accepts, at most max of them; truncated says more were
// left out. A log that does not exist is an error wrapping
// fs.ErrNotExist (the server kept none). A malformed line stops the read:
// what was read before it is returned with the error.
func ReadAccessLog(path string, keep func(key string) bool, max int) (reqs []Request, truncated bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "log starts") {
			continue
		}
		before, after, ok := strings.Cut(text, "] ")
		fields := strings.Fields(after)
		if !ok || len(fields) < 7 {
			return reqs, truncated, fmt.Errorf("%s:%d: %w: %.120q", path, line, ErrAccessLog, text)
		}
		// After the time: remote ip, requester, request id, operation,
		// key, request-URI, status.
		status, err := strconv.Atoi(fields[6])
		if err != nil {
			return reqs, truncated, fmt.Errorf("%s:%d: %w: status %q", path, line, ErrAccessLog, fields[6])
		}
		r := Request{Op: fields[3], Key: fields[4], Status: status}
		if _, stamp, found := strings.Cut(before, "["); found {
			if at, err := time.Parse(accessLogTime, stamp); err == nil {
				r.At = at.UTC()
			}
		}
		if !keep(r.Key) {
			continue
		}
		if len(reqs) >= max {
			truncated = true
			continue
		}
		reqs = append(reqs, r)
	}
	return reqs, truncated, sc.Err()
}
