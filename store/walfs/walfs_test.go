package walfs

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

type quiet struct{}

func (quiet) Infof(string, ...any)         {}
func (quiet) Errorf(string, ...any)        {}
func (quiet) Fatalf(f string, args ...any) { panic(f) }

func open(t *testing.T, fs vfs.FS) *pebble.DB {
	t.Helper()
	db, err := pebble.Open("db", &pebble.Options{FS: fs, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func has(t *testing.T, fs vfs.FS, key string) bool {
	t.Helper()
	db := open(t, fs)
	defer db.Close()
	_, closer, err := db.Get([]byte(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	closer.Close()
	return true
}

// The finding this package is built on, checked against Pebble itself.
func TestWhyWalfsExists(t *testing.T) {
	cases := []struct {
		name      string
		deferSync bool
		sync      bool
		// survives a process crash (clone with every written byte) and an
		// OS crash (clone with only synced bytes), before SyncAll.
		processCrash, osCrash bool
	}{
		// A NoSync commit sits in the LogWriter's memory until its flusher
		// goroutine writes it out: kill -9 may lose it (whether it did here
		// depends on that goroutine's timing, so it is not asserted).
		{"plain NoSync", false, false, false, false},
		// A Sync commit is written and fsynced.
		{"plain Sync", false, true, true, true},
		// Deferred sync: written to the file before the commit returns, so a
		// process crash keeps it; the fsync is owed until SyncAll.
		{"deferred Sync", true, true, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			fs := New(mem, c.deferSync)
			db := open(t, fs)
			defer db.Close()
			opts := pebble.NoSync
			if c.sync {
				opts = pebble.Sync
			}
			if err := db.Set([]byte("k"), []byte("v"), opts); err != nil {
				t.Fatal(err)
			}
			proc := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(1, 2))})
			osc := mem.CrashClone(vfs.CrashCloneCfg{})
			if got := has(t, proc, "k"); got != c.processCrash && (c.sync || c.deferSync) {
				t.Errorf("after process crash: present=%v, want %v", got, c.processCrash)
			}
			if got := has(t, osc, "k"); got != c.osCrash {
				t.Errorf("after OS crash: present=%v, want %v", got, c.osCrash)
			}
			if c.deferSync {
				if err := fs.SyncAll(); err != nil {
					t.Fatal(err)
				}
				if !has(t, mem.CrashClone(vfs.CrashCloneCfg{}), "k") {
					t.Error("SyncAll did not make the write survive an OS crash")
				}
			}
		})
	}
}
