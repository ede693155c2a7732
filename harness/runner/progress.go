package runner

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progress prints one live line: scenario, step, elapsed, ops/s, last event.
// On a terminal it rewrites the line in place; elsewhere it prints a line
// every few seconds.
type progress struct {
	w        io.Writer
	tty      bool
	name     string
	total    int
	start    time.Time
	mu       sync.Mutex
	stepNo   int
	label    string
	done     chan struct{}
	stopOnce sync.Once
	stats    func() (ops int64, last string)
}

func newProgress(w io.Writer, name string, steps int, stats func() (int64, string)) *progress {
	p := &progress{w: w, name: name, total: steps, start: time.Now(), done: make(chan struct{}), stats: stats}
	if w == nil {
		return p
	}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	go p.loop()
	return p
}

func (p *progress) set(label, _ string) {
	p.mu.Lock()
	p.label = label
	p.mu.Unlock()
	p.print(true)
}

func (p *progress) step(n int, label string) {
	p.mu.Lock()
	p.stepNo, p.label = n, label
	p.mu.Unlock()
	p.print(true)
}

func (p *progress) loop() {
	interval := 5 * time.Second
	if p.tty {
		interval = 500 * time.Millisecond
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var lastOps int64
	lastAt := time.Now()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			var ops int64
			last := ""
			if p.stats != nil {
				ops, last = p.stats()
			}
			rate := float64(ops-lastOps) / time.Since(lastAt).Seconds()
			lastOps, lastAt = ops, time.Now()
			p.printStats(rate, last)
		}
	}
}

func (p *progress) line(rate float64, last string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := fmt.Sprintf("[%s] %5.1fs", p.name, time.Since(p.start).Seconds())
	if p.stepNo > 0 {
		s += fmt.Sprintf(" · step %d/%d %s", p.stepNo, p.total, p.label)
	} else {
		s += " · " + p.label
	}
	if rate >= 0 {
		s += fmt.Sprintf(" · %.0f ok ops/s", rate)
	}
	if last != "" {
		s += " · last: " + last
	}
	return s
}

func (p *progress) print(changed bool) {
	if p.w == nil || !changed {
		return
	}
	p.emit(p.line(-1, ""))
}

func (p *progress) printStats(rate float64, last string) { p.emit(p.line(rate, last)) }

func (p *progress) emit(s string) {
	if p.tty {
		if len(s) > 160 {
			s = s[:159] + "…"
		}
		fmt.Fprintf(p.w, "\r\033[K%s", s)
		return
	}
	fmt.Fprintln(p.w, s)
}

func (p *progress) stop() {
	p.stopOnce.Do(func() {
		close(p.done)
		if p.tty && p.w != nil {
			fmt.Fprintln(p.w)
		}
	})
}
