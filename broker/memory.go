package broker

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// physicalMemory is the machine's memory in bytes (MemTotal of
// /proc/meminfo), 8 GiB where that cannot be read.
func physicalMemory() int64 {
	const fallback = 8 << 30
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return fallback
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil && kb > 0 {
				return kb << 10
			}
		}
	}
	return fallback
}
