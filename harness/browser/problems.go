package browser

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
)

// Kind is what is wrong with a page.
type Kind string

// The kinds of problem a check reports.
const (
	Exception       Kind = "uncaught exception"   // a script threw and nothing caught it
	ConsoleError    Kind = "console error"        // console.error or console.assert, or an error in the browser's log
	ResourceFailed  Kind = "failed resource load" // an image, script, style or frame the page names did not load
	NoTimeline      Kind = "no timeline"          // no element with the timeline's id, or it has no size
	EmptyTimeline   Kind = "empty timeline"       // the timeline draws nothing of the run
	NoAuditTable    Kind = "no audit table"       // no element with the audit table's id, or it has no size
	EmptyAuditTable Kind = "empty audit table"    // the audit table has no audit's row
)

// Problem is one thing wrong with the page.
type Problem struct {
	Kind   Kind
	Detail string
}

func (p Problem) String() string { return string(p.Kind) + ": " + p.Detail }

// ReportError is a page that loaded but did not pass: every problem found,
// in the order the browser reported them, the page's own checks last.
type ReportError struct {
	Page     string
	Problems []Problem
}

func (e *ReportError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s in chromium: %d problem(s)", e.Page, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// Has reports whether the error lists a problem of kind k.
func (e *ReportError) Has(k Kind) bool {
	for _, p := range e.Problems {
		if p.Kind == k {
			return true
		}
	}
	return false
}

// console collects the problems the browser reports while the page loads.
// Its listen runs on the tab's message loop, in the order the events
// arrive, so once a command's reply is back every event sent before it
// has been seen.
type console struct {
	mu       sync.Mutex
	problems []Problem
	urls     map[network.RequestID]string // requests seen, for the URL of a failed one
}

func newConsole() *console { return &console{urls: map[network.RequestID]string{}} }

func (c *console) add(k Kind, detail string) {
	c.problems = append(c.problems, Problem{Kind: k, Detail: detail})
}

// listen is a chromedp listener: it must return fast and send no command.
func (c *console) listen(ev any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		c.add(Exception, exceptionText(ev.ExceptionDetails))
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			c.add(ConsoleError, fmt.Sprintf("console.%s: %s%s", ev.Type, argsText(ev.Args), stackPlace(ev.StackTrace)))
		}
	case *log.EventEntryAdded:
		// A failed load is reported once, by the network domain below.
		if e := ev.Entry; e.Level == log.EntryLevelError && e.Source != log.EntrySourceNetwork {
			c.add(ConsoleError, fmt.Sprintf("%s: %s %s", e.Source, e.Text, e.URL))
		}
	case *network.EventRequestWillBeSent:
		c.urls[ev.RequestID] = ev.Request.URL
	case *network.EventLoadingFailed:
		if !ev.Canceled {
			c.add(ResourceFailed, fmt.Sprintf("%s %s: %s", ev.Type, c.urls[ev.RequestID], ev.ErrorText))
		}
	}
}

// found returns what was collected so far.
func (c *console) found() []Problem {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Problem(nil), c.problems...)
}

// exceptionText is the error and where it was thrown.
func exceptionText(d *runtime.ExceptionDetails) string {
	text := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		desc, _, _ := strings.Cut(d.Exception.Description, "\n")
		text += " " + desc
	}
	return fmt.Sprintf("%s (%s:%d:%d)", text, d.URL, d.LineNumber+1, d.ColumnNumber+1)
}

// argsText renders console arguments roughly as DevTools shows them:
// strings as they are, other values by their description.
func argsText(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		switch {
		case a.Type == runtime.RemoteObjectTypeString:
			var str string
			if json.Unmarshal(a.Value, &str) != nil {
				str = string(a.Value)
			}
			parts = append(parts, str)
		case a.Description != "":
			parts = append(parts, a.Description)
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}

// stackPlace is " (url:line)" of a call's first frame, "" without one.
func stackPlace(st *runtime.StackTrace) string {
	if st == nil || len(st.CallFrames) == 0 {
		return ""
	}
	f := st.CallFrames[0]
	return fmt.Sprintf(" (%s:%d)", f.URL, f.LineNumber+1)
}
