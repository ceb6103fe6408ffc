package filter

import (
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/runnelmq/runnel/broker/filter/sql92"
)

// DefaultCacheSize is how many compiled expressions a Cache keeps.
const DefaultCacheSize = 1024

// Cache compiles SQL92 expressions once for pull consumers, which send
// their expression with every pull: a bounded LRU by expression text, so a
// client sending endless distinct expressions costs bounded memory.
// Compile errors are cached too, so a bad expression is not re-parsed on
// every pull.
type Cache struct {
	lru *lru.Cache[string, compiled]
}

type compiled struct {
	expr *sql92.Expr
	err  error
}

// NewCache returns a cache of size entries (DefaultCacheSize when <= 0).
func NewCache(size int) *Cache {
	if size <= 0 {
		size = DefaultCacheSize
	}
	c, _ := lru.New[string, compiled](size) // only a size <= 0 fails
	return &Cache{lru: c}
}

// Compile returns the compiled expression, from the cache when it was
// compiled before.
func (c *Cache) Compile(expr string) (*sql92.Expr, error) {
	if v, ok := c.lru.Get(expr); ok {
		return v.expr, v.err
	}
	e, err := sql92.Compile(expr)
	c.lru.Add(expr, compiled{e, err})
	return e, err
}

// Len returns how many expressions are cached.
func (c *Cache) Len() int { return c.lru.Len() }
