package bench

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// userHZ is the kernel's clock tick for /proc/stat (USER_HZ, 100 on
// every Linux this runs on).
const userHZ = 100

// machineBusy is the CPU time every core of the machine has spent busy
// since boot (user, nice, system, irq, softirq, steal in /proc/stat): the
// work of this process, versitygw and etcd together. 0 where there is no
// /proc/stat.
func machineBusy() time.Duration {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system (idle iowait) irq softirq steal
		n, err := strconv.ParseInt(fields[i], 10, 64)
		if err != nil {
			return 0
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ
}

// busyDuring measures the machine's busy CPU time while fn runs.
func busyDuring(fn func()) time.Duration {
	before := machineBusy()
	fn()
	return machineBusy() - before
}

// cpuFloor is the least wall time work needing busy CPU can take on this
// machine's cores.
func cpuFloor(busy time.Duration) time.Duration {
	return busy / time.Duration(runtime.NumCPU())
}
