package engine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/gpulet/gpuletd/internal/procfs"
)

// ErrOutOfMemory: an emulated device has too little memory left for a
// model's load, as a GPU whose memory other executors hold refuses one.
var ErrOutOfMemory = errors.New("out of memory")

// DeviceMemory is an emulated device's memory, shared by the executors of
// every process on it: a file that lists what each loaded model holds (with
// its process's ID and start time), read and written under an exclusive
// lock. A process that has died holds nothing (its lines are dropped when
// the file is next read, also when its ID has been reused since), as a GPU
// frees a dead process's memory.
type DeviceMemory struct {
	// Path is the file; Device names the device in errors; TotalMB is
	// its memory in MiB.
	Path    string
	Device  string
	TotalMB float64
	seq     atomic.Int64
}

// Take records mb MiB held by a model named name and returns the key that
// gives it back, or ErrOutOfMemory when the device's loads leave less.
func (d *DeviceMemory) Take(name string, mb float64) (string, error) {
	key := fmt.Sprintf("%d/%d", os.Getpid(), d.seq.Add(1))
	err := d.update(func(held []heldMemory) ([]heldMemory, error) {
		used := 0.0
		for _, h := range held {
			used += h.mb
		}
		if used+mb > d.TotalMB {
			return nil, fmt.Errorf("%w on %s: %s needs %.0f MiB, %.0f MiB of %.0f MiB are free (emulated device)",
				ErrOutOfMemory, d.Device, name, mb, max(d.TotalMB-used, 0), d.TotalMB)
		}
		start, _ := processStart(os.Getpid())
		return append(held, heldMemory{pid: os.Getpid(), start: start, key: key, mb: mb}), nil
	})
	if err != nil {
		return "", err
	}
	return key, nil
}

// Give gives back what Take recorded under key.
func (d *DeviceMemory) Give(key string) error {
	return d.update(func(held []heldMemory) ([]heldMemory, error) {
		out := held[:0]
		for _, h := range held {
			if h.key != key {
				out = append(out, h)
			}
		}
		return out, nil
	})
}

// heldMemory is one line of the file: a process, its load's key and what
// the load holds.
type heldMemory struct {
	pid   int
	start string // the process's start time, in clock ticks after boot
	key   string
	mb    float64
}

// update reads the file under its lock, less the lines of processes that
// are gone, and writes back what f returns (nothing on f's error).
func (d *DeviceMemory) update(f func([]heldMemory) ([]heldMemory, error)) error {
	file, err := os.OpenFile(d.Path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open device memory: %w", err)
	}
	defer file.Close()
	if err := syscall.Flock(int(file.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock device memory: %w", err)
	}
	defer syscall.Flock(int(file.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing unlocks too
	held, err := readHeld(file)
	if err != nil {
		return err
	}
	held, err = f(held)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	for _, h := range held {
		fmt.Fprintf(&b, "%d %s %s %g\n", h.pid, h.start, h.key, h.mb)
	}
	if err := file.Truncate(0); err != nil {
		return fmt.Errorf("write device memory: %w", err)
	}
	if _, err := file.WriteAt(b.Bytes(), 0); err != nil {
		return fmt.Errorf("write device memory: %w", err)
	}
	return nil
}

// Used is the MiB the loads of live processes hold on the device now, read
// under a shared lock and changing nothing (the daemon's view of an
// emulated GPU's memory); none before any load made the file.
func (d *DeviceMemory) Used() (float64, error) {
	file, err := os.Open(d.Path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("open device memory: %w", err)
	}
	defer file.Close()
	if err := syscall.Flock(int(file.Fd()), syscall.LOCK_SH); err != nil {
		return 0, fmt.Errorf("lock device memory: %w", err)
	}
	defer syscall.Flock(int(file.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing unlocks too
	held, err := readHeld(file)
	if err != nil {
		return 0, err
	}
	used := 0.0
	for _, h := range held {
		used += h.mb
	}
	return used, nil
}

// readHeld reads the file's lines, less those of processes that are gone.
func readHeld(r io.Reader) ([]heldMemory, error) {
	var held []heldMemory
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 {
			continue
		}
		pid, perr := strconv.Atoi(fields[0])
		mb, merr := strconv.ParseFloat(fields[3], 64)
		if perr != nil || merr != nil {
			continue
		}
		if start, ok := processStart(pid); !ok || start != fields[1] {
			continue // gone, or its ID now names another process
		}
		held = append(held, heldMemory{pid: pid, start: fields[1], key: fields[2], mb: mb})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read device memory: %w", err)
	}
	return held, nil
}

// processStart is the start time of process pid (field 22 of
// /proc/PID/stat, clock ticks after boot); false when no such process runs.
// A zombie still has one: its parent has not reaped it yet, and a GPU frees
// its memory only then too.
func processStart(pid int) (string, bool) {
	fields, err := procfs.Stat(pid)
	const start = 22 - 3 // procfs.Stat's fields begin at field 3
	if err != nil || len(fields) <= start {
		return "", false
	}
	return fields[start], true
}
