package auth

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Store holds the records; *store.Store is one. Writes go through its one
// apply path, and AuthVersion moves whenever one is applied, by any path,
// and differs between two store handles (a replica's store swapped for
// one restored from a snapshot never repeats the old one's version).
type Store interface {
	PutAuth(name string, value []byte) error
	DeleteAuth(name string) error
	RangeAuth(prefix string, fn func(name string, value []byte) bool) error
	AuthVersion() uint64
}

// Config configures a Manager: RocketMQ 5.3's auth keys of broker.conf.
type Config struct {
	// InitLater leaves the initial users to a later EnsureInitUsers (a
	// replicated group's node, which writes only once it is master).
	// Default false: Open creates them.
	InitLater bool
	// AuthenticationEnabled needs every request signed by an enabled user
	// (authenticationEnabled). Default false.
	AuthenticationEnabled bool
	// AuthorizationEnabled checks what each request needs against the
	// user's ACL (authorizationEnabled). Default false.
	AuthorizationEnabled bool
	// AuthenticationWhitelist and AuthorizationWhitelist are request codes
	// that skip the check (authenticationWhitelist / authorizationWhitelist,
	// comma-separated codes in broker.conf). Default none.
	AuthenticationWhitelist []int16
	AuthorizationWhitelist  []int16
	// InitUsers are created as super users at Open unless a user of that
	// name exists (initAuthenticationUser, and the account of
	// innerClientAuthenticationCredentials).
	InitUsers []protocol.UserInfo
	// InnerCredentials sign the server's own requests (to name servers and
	// clients); its account is created as a super user at Open, as Java
	// does (innerClientAuthenticationCredentials). Default none.
	InnerCredentials acl.Credentials
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

// Manager holds the users and ACLs, answers the admin requests on them
// and checks requests. Its methods are safe for concurrent use.
type Manager struct {
	cfg        Config
	st         Store
	authnWhite map[string]bool // by acl.Request.Op
	authzWhite map[string]bool
	// mu serializes writes and reloads; readers use snap alone.
	mu   sync.Mutex
	snap atomic.Pointer[snapshot]
}

// snapshot is the records as of one store AuthVersion.
type snapshot struct {
	version uint64
	users   map[string]*user
	acls    map[string]*ACL
	// userACLs are the ACLs of "User:" subjects by user name, so a check
	// finds one without building the subject.
	userACLs map[string]*ACL
}

// userSubject prefixes a user's name to make its ACL's subject.
const userSubject = "User:"

// keyVerifier checks one user's signatures (acl.Key).
type keyVerifier = acl.Key

// Record names.
const (
	userPrefix = "user/"
	aclPrefix  = "acl/"
)

// Open loads the records of st and, unless cfg.InitLater, creates
// cfg.InitUsers (EnsureInitUsers).
func Open(cfg Config, st Store) (*Manager, error) {
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	m := &Manager{cfg: cfg, st: st, authnWhite: opSet(cfg.AuthenticationWhitelist), authzWhite: opSet(cfg.AuthorizationWhitelist)}
	if _, err := m.reload(); err != nil {
		return nil, err
	}
	if !cfg.InitLater {
		if err := m.EnsureInitUsers(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// EnsureInitUsers creates the initial users (cfg.InitUsers and the inner
// client's credentials, as super users) that st does not hold, as Java
// does at every start. A replicated group's master calls it once it
// leads: only a master's writes reach every replica.
func (m *Manager) EnsureInitUsers() error {
	inits := m.cfg.InitUsers
	if c := m.cfg.InnerCredentials; !c.Empty() {
		inits = append(slices.Clip(inits), protocol.UserInfo{Username: c.AccessKey, Password: c.SecretKey})
	}
	for _, u := range inits {
		if m.current().users[u.Username] != nil {
			continue
		}
		u.UserType = string(Super)
		if err := m.CreateUser(u, ""); err != nil {
			return fmt.Errorf("auth: initial user %q: %w", u.Username, err)
		}
	}
	return nil
}

// opSet is the ops of request codes: the remoting door's Request.Op.
func opSet(codes []int16) map[string]bool {
	s := make(map[string]bool, len(codes))
	for _, c := range codes {
		s[strconv.Itoa(int(c))] = true
	}
	return s
}

// Enabled reports whether m checks anything.
func (m *Manager) Enabled() bool { return m.cfg.AuthenticationEnabled || m.cfg.AuthorizationEnabled }

// current is the snapshot of the store's records now.
func (m *Manager) current() *snapshot {
	s := m.snap.Load()
	if s != nil && s.version == m.st.AuthVersion() {
		return s
	}
	s, err := m.reload()
	if err != nil {
		m.cfg.Logger.Error("auth: reading users and ACLs failed; the previous ones stay in force", "err", err)
		return m.snap.Load()
	}
	return s
}

// reload reads every record into a new snapshot. The version is read
// first: a write racing the read moves it again, and the next request
// reloads.
func (m *Manager) reload() (*snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reloadLocked()
}

func (m *Manager) reloadLocked() (*snapshot, error) {
	v := m.st.AuthVersion()
	if s := m.snap.Load(); s != nil && s.version == v {
		return s, nil
	}
	s := &snapshot{version: v, users: map[string]*user{}, acls: map[string]*ACL{}, userACLs: map[string]*ACL{}}
	var bad error
	err := m.st.RangeAuth("", func(name string, value []byte) bool {
		switch {
		case strings.HasPrefix(name, userPrefix):
			var u protocol.UserInfo
			if err := json.Unmarshal(value, &u); err != nil {
				bad = fmt.Errorf("auth: record %s: %w", name, err)
				return false
			}
			s.users[u.Username] = &user{info: u, key: acl.NewKey(u.Password)}
		case strings.HasPrefix(name, aclPrefix):
			var info protocol.ACLInfo
			if err := json.Unmarshal(value, &info); err != nil {
				bad = fmt.Errorf("auth: record %s: %w", name, err)
				return false
			}
			a, err := aclFromInfo(info)
			if err != nil {
				bad = fmt.Errorf("auth: record %s: %w", name, err)
				return false
			}
			s.acls[a.Subject] = a
			if name, ok := strings.CutPrefix(a.Subject, userSubject); ok {
				s.userACLs[name] = a
			}
		}
		return true
	})
	if err = cmp.Or(err, bad); err != nil {
		return nil, err
	}
	m.snap.Store(s)
	return s, nil
}

// Decide decides r as the package doc says: nil or an *Error.
func (m *Manager) Decide(r *acl.Request) error {
	s := m.current()
	ak := r.AccessKey
	if m.cfg.AuthenticationEnabled && !m.authnWhite[r.Op] {
		if ak == "" {
			return unauthenticated("username cannot be null.")
		}
		u := s.users[ak]
		switch {
		case u == nil:
			return unauthenticated("User:%s is not found.", acl.Clip(ak))
		case u.info.UserStatus == Disabled:
			return unauthenticated("User:%s is disabled.", acl.Clip(ak))
		case r.Proof == nil || !r.Proof.SignedWith(u.key):
			return unauthenticated("check signature failed.")
		}
	}
	if !m.cfg.AuthorizationEnabled || m.authzWhite[r.Op] || len(r.Needs) == 0 {
		return nil
	}
	u := s.users[ak]
	switch {
	case u == nil:
		return unauthenticated("User:%s not found.", acl.Clip(ak))
	case u.info.UserStatus == Disabled:
		return unauthenticated("User:%s is disabled.", acl.Clip(ak))
	case u.info.UserType == string(Super):
		return nil
	}
	a := s.userACLs[ak]
	ip := lazyIP{remote: r.Source}
	for _, n := range r.Needs {
		if err := decide(a, n, ak, &ip); err != nil {
			return err
		}
	}
	return nil
}

// decide checks one need of user ak, from remote, ip, against a (nil: no
// ACL), as Java's AclAuthorizationHandler does.
func decide(a *ACL, n acl.Need, ak string, ip *lazyIP) error {
	var best *Entry
	if a != nil {
		for _, pt := range [...]string{Custom, Default} {
			for i := range a.Policies[pt] {
				e := &a.Policies[pt][i]
				if e.matches(n, ip) && (best == nil || e.before(best)) {
					best = e
				}
			}
			if best != nil {
				break // Default entries count only when no Custom one matches
			}
		}
	}
	if best == nil {
		return denied(ak, n, ip.remote, "no matched policies.")
	}
	if best.Decision == Deny {
		return denied(ak, n, ip.remote, "the decision is deny.")
	}
	return nil
}

// denied is Java's refusal of a need of user ak from remote.
func denied(ak string, n acl.Need, remote, detail string) *Error {
	ip := remote
	if i := strings.LastIndexByte(remote, ':'); i >= 0 {
		ip = strings.Trim(remote[:i], "[]")
	}
	res := n.Resource
	res.Name = acl.Clip(res.Name)
	return &Error{Code: protocol.RespNoPermission, kind: acl.ErrDenied,
		Msg: fmt.Sprintf("%s%s has no permission to access %s from %s, %s", userSubject, acl.Clip(ak), res, ip, detail)}
}

// before reports whether e is more specific than o, or as specific and
// Deny while o is not (Java's comparePolicyEntries).
func (e *Entry) before(o *Entry) bool {
	r1, r2 := e.Resource, o.Resource
	switch {
	case r1.Type != r2.Type && (r1.Type == acl.AnyType) != (r2.Type == acl.AnyType):
		return r2.Type == acl.AnyType
	case r1.Type == r2.Type && r1.Pattern != r2.Pattern:
		return r1.Pattern < r2.Pattern
	case r1.Type == r2.Type && r1.Pattern == acl.Prefixed && len(r1.Name) != len(r2.Name):
		return len(r1.Name) > len(r2.Name)
	}
	return e.Decision == Deny && o.Decision != Deny
}

// lazyIP is a request's source address, parsed when an entry with
// source IPs first asks for it.
type lazyIP struct {
	remote string // "ip:port"
	ip     netip.Addr
	parsed bool
}

func (l *lazyIP) get() netip.Addr {
	if !l.parsed {
		l.ip, l.parsed = acl.RemoteIP(l.remote), true
	}
	return l.ip
}

// matches reports whether e applies to n from ip.
func (e *Entry) matches(n acl.Need, ip *lazyIP) bool {
	if !e.Resource.Covers(n.Resource) {
		return false
	}
	if e.Actions&acl.All == 0 && n.Actions&acl.Any == 0 && e.Actions&n.Actions == 0 {
		return false
	}
	if len(e.SourceIPs) == 0 {
		return true
	}
	for _, p := range e.SourceIPs {
		if p.Contains(ip.get()) {
			return true
		}
	}
	return false
}

// Errors of the admin requests that are not Java's NO_PERMISSION.
var errBlankUsername = &Error{Code: protocol.RespInvalidParameter, Msg: "The username is blank"}

// isSuper reports whether ak signs as a super user. An unsigned request
// counts as one, as Java's isNotSuperUserLogin has it (authentication is
// then off).
func (s *snapshot) isSuper(ak string) bool {
	if ak == "" {
		return true
	}
	u := s.users[ak]
	return u != nil && u.info.UserType == string(Super)
}

func userType(s string) (string, error) {
	switch {
	case s == "":
		return "", nil
	case strings.EqualFold(s, string(Super)):
		return string(Super), nil
	case strings.EqualFold(s, string(Normal)):
		return string(Normal), nil
	}
	return "", refuse("The user type %s is illegal.", s)
}

func userStatus(s string) (string, error) {
	switch {
	case s == "":
		return "", nil
	case strings.EqualFold(s, Enabled):
		return Enabled, nil
	case strings.EqualFold(s, Disabled):
		return Disabled, nil
	}
	return "", refuse("The user status %s is illegal.", s)
}

// normalizeUser checks what a create or update request says of a user
// and puts its type and status in their canonical spelling.
func normalizeUser(u *protocol.UserInfo) error {
	if strings.TrimSpace(u.Username) == "" {
		return errBlankUsername
	}
	var err error
	if u.UserType, err = userType(u.UserType); err != nil {
		return err
	}
	u.UserStatus, err = userStatus(u.UserStatus)
	return err
}

// CreateUser creates u (AUTH_CREATE_USER) for the caller signing as
// callerAK: Normal and enabled unless u says otherwise; a super user only
// by a super user.
func (m *Manager) CreateUser(u protocol.UserInfo, callerAK string) error {
	if err := normalizeUser(&u); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.reloadLocked()
	if err != nil {
		return err
	}
	if u.UserType == string(Super) && !s.isSuper(callerAK) {
		return &Error{Code: protocol.RespSystemError, Msg: "The super user can only be create by super user"}
	}
	if strings.TrimSpace(u.Password) == "" {
		return refuse("password can not be blank")
	}
	if s.users[u.Username] != nil {
		return refuse("The user is existed")
	}
	u.UserType = cmp.Or(u.UserType, string(Normal))
	u.UserStatus = cmp.Or(u.UserStatus, Enabled)
	return m.putLocked(userPrefix+u.Username, u)
}

// UpdateUser changes the password, type or status u gives
// (AUTH_UPDATE_USER); a super user, or one to become super, only by a
// super user.
func (m *Manager) UpdateUser(u protocol.UserInfo, callerAK string) error {
	if err := normalizeUser(&u); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.reloadLocked()
	if err != nil {
		return err
	}
	if u.UserType == string(Super) && !s.isSuper(callerAK) {
		return &Error{Code: protocol.RespSystemError, Msg: "The super user can only be update by super user"}
	}
	old := s.users[u.Username]
	if old == nil {
		return refuse("The user is not exist")
	}
	if old.info.UserType == string(Super) && !s.isSuper(callerAK) {
		return refuse("The super user can only be update by super user")
	}
	next := old.info
	if strings.TrimSpace(u.Password) != "" {
		next.Password = u.Password
	}
	next.UserType = cmp.Or(u.UserType, next.UserType)
	next.UserStatus = cmp.Or(u.UserStatus, next.UserStatus)
	return m.putLocked(userPrefix+u.Username, next)
}

// DeleteUser deletes a user and its ACL (AUTH_DELETE_USER); an unknown
// user is no error; a super user only by a super user.
func (m *Manager) DeleteUser(name, callerAK string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.reloadLocked()
	if err != nil {
		return err
	}
	u := s.users[name]
	if u == nil {
		return nil
	}
	if u.info.UserType == string(Super) && !s.isSuper(callerAK) {
		return refuse("The super user can only be update by super user")
	}
	if err := m.st.DeleteAuth(userPrefix + name); err != nil {
		return err
	}
	if s.acls["User:"+name] != nil {
		if err := m.st.DeleteAuth(aclPrefix + "User:" + name); err != nil {
			return err
		}
	}
	_, err = m.reloadLocked()
	return err
}

// GetUser returns a user (AUTH_GET_USER), ok false for none.
func (m *Manager) GetUser(name string) (protocol.UserInfo, bool, error) {
	if strings.TrimSpace(name) == "" {
		return protocol.UserInfo{}, false, errBlankUsername
	}
	u := m.current().users[name]
	if u == nil {
		return protocol.UserInfo{}, false, nil
	}
	return u.info, true, nil
}

// ListUsers returns the users whose name contains filter, by name
// (AUTH_LIST_USER).
func (m *Manager) ListUsers(filter string) []protocol.UserInfo {
	var out []protocol.UserInfo
	for name, u := range m.current().users {
		if strings.Contains(name, filter) {
			out = append(out, u.info)
		}
	}
	slices.SortFunc(out, func(a, b protocol.UserInfo) int { return strings.Compare(a.Username, b.Username) })
	return out
}

// subjectUser reads "User:name".
func subjectUser(subject string) (string, error) {
	name, ok := strings.CutPrefix(strings.TrimSpace(subject), "User:")
	if !ok || name == "" {
		return "", refuse("The subject type is null.")
	}
	return name, nil
}

// PutACL adds info's policies to its subject's ACL, an entry replacing the
// one of the same resource and policy type (AUTH_CREATE_ACL and
// AUTH_UPDATE_ACL, which Java treats alike). headerSubject is used when
// info names none.
func (m *Manager) PutACL(headerSubject string, info protocol.ACLInfo) error {
	if len(info.Policies) == 0 {
		return &Error{Code: protocol.RespSystemError, Msg: "The body of acl is null"}
	}
	info.Subject = cmp.Or(info.Subject, headerSubject)
	name, err := subjectUser(info.Subject)
	if err != nil {
		return err
	}
	add, err := aclFromInfo(info)
	if err != nil {
		return err
	}
	add.Subject = "User:" + name
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.reloadLocked()
	if err != nil {
		return err
	}
	if s.users[name] == nil {
		return refuse("The subject of %s is not exist.", add.Subject)
	}
	next := add
	if old := s.acls[add.Subject]; old != nil {
		next = old.clone()
		for pt, es := range add.Policies {
			for _, e := range es {
				next.Policies[pt] = upsert(next.Policies[pt], e)
			}
		}
	}
	return m.putLocked(aclPrefix+next.Subject, next.info())
}

// DeleteACL deletes a subject's ACL, or only its entry for resource in
// the policy type policy ("" Custom) (AUTH_DELETE_ACL).
func (m *Manager) DeleteACL(subject, policy, resource string) error {
	if strings.TrimSpace(subject) == "" {
		return refuse("The subject is null.")
	}
	name, err := subjectUser(subject)
	if err != nil {
		return err
	}
	pt, err := policyType(policy)
	if err != nil {
		return err
	}
	var r *acl.Resource
	if strings.TrimSpace(resource) != "" {
		res, err := acl.ParseResource(resource)
		if err != nil {
			return refuse("The resource is illegal. (%v)", err)
		}
		r = &res
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.reloadLocked()
	if err != nil {
		return err
	}
	key := "User:" + name
	old := s.acls[key]
	switch {
	case s.users[name] == nil:
		return refuse("The subject is not exist.")
	case old == nil:
		return refuse("The acl is not exist.")
	}
	next := old.clone()
	if r != nil {
		next.Policies[pt] = slices.DeleteFunc(next.Policies[pt], func(e Entry) bool { return e.Resource == *r })
		if len(next.Policies[pt]) == 0 {
			delete(next.Policies, pt)
		}
	}
	if r == nil || len(next.Policies) == 0 {
		if err := m.st.DeleteAuth(aclPrefix + key); err != nil {
			return err
		}
		_, err = m.reloadLocked()
		return err
	}
	return m.putLocked(aclPrefix+key, next.info())
}

// GetACL returns a subject's ACL (AUTH_GET_ACL), ok false for none.
func (m *Manager) GetACL(subject string) (protocol.ACLInfo, bool, error) {
	name, err := subjectUser(subject)
	if err != nil {
		return protocol.ACLInfo{}, false, err
	}
	s := m.current()
	if s.users[name] == nil {
		return protocol.ACLInfo{}, false, refuse("The subject is not exist.")
	}
	a := s.acls["User:"+name]
	if a == nil {
		return protocol.ACLInfo{}, false, nil
	}
	return a.info(), true, nil
}

// ListACLs returns the ACLs whose subject contains subjectFilter, each
// with only its entries whose resource contains resourceFilter (unless the
// subject does), by subject (AUTH_LIST_ACL).
func (m *Manager) ListACLs(subjectFilter, resourceFilter string) []protocol.ACLInfo {
	var out []protocol.ACLInfo
	for subject, a := range m.current().acls {
		if !strings.Contains(subject, subjectFilter) {
			continue
		}
		info := a.info()
		if resourceFilter != "" && !strings.Contains(subject, resourceFilter) {
			ps := info.Policies[:0]
			for _, p := range info.Policies {
				p.Entries = slices.DeleteFunc(p.Entries, func(e protocol.PolicyEntryInfo) bool {
					return !strings.Contains(e.Resource, resourceFilter)
				})
				if len(p.Entries) > 0 {
					ps = append(ps, p)
				}
			}
			info.Policies = ps
		}
		if len(info.Policies) > 0 {
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b protocol.ACLInfo) int { return strings.Compare(a.Subject, b.Subject) })
	return out
}

// putLocked stores v as record name and reloads.
func (m *Manager) putLocked(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := m.st.PutAuth(name, b); err != nil {
		return err
	}
	_, err = m.reloadLocked()
	return err
}
