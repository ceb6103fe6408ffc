package acl

import (
	"net/netip"
)

// Decide decides r against the accounts of t, in the order the package
// doc gives: nil, or an *Error.
func (t *Table) Decide(r *Request) error {
	// The address is parsed only for a white list to match it against.
	var ip netip.Addr
	if len(t.global) > 0 {
		ip = RemoteIP(r.Source)
		for _, p := range t.global {
			if p.match(ip) {
				return nil
			}
		}
	}
	ak := r.AccessKey
	if ak == "" {
		return unauthenticated("No accessKey is configured")
	}
	acc := t.accounts[ak]
	if acc == nil {
		return unauthenticated("No acl config for %s", Clip(ak))
	}
	if acc.white != nil {
		if !ip.IsValid() {
			ip = RemoteIP(r.Source)
		}
		if acc.white.match(ip) {
			return nil
		}
	}
	if r.Proof == nil || !r.Proof.SignedWith(Key{acc.signer}) {
		return unauthenticated("Check signature failed for accessKey=%s", Clip(ak))
	}
	if acc.admin {
		return nil
	}
	for _, n := range r.Needs {
		if _, _, rule := plainNeed(n); rule == plainAdmin {
			return denied("Need admin permission for request code=%s, but accessKey=%s is not", r.Op, Clip(ak))
		}
	}
	for _, n := range r.Needs {
		// Java lets the message trace topic through for any signed account.
		if n.Resource.Type == Topic && n.Resource.Name == traceTopic && n.Actions&Pub != 0 {
			return nil
		}
	}
	for _, n := range r.Needs {
		name, perm, rule := plainNeed(n)
		if rule != plainPerm {
			continue
		}
		owned, named := acc.perms[name]
		if !named {
			owned = acc.defTopic
			if n.Resource.Type == Group {
				owned = acc.defGroup
			}
			if !owned.grants(perm) {
				return denied("No default permission for %s", plainName(n.Resource))
			}
			continue
		}
		if !owned.grants(perm) {
			return denied("No permission for %s", plainName(n.Resource))
		}
	}
	return nil
}

// Accounts returns the number of accounts in t.
func (t *Table) Accounts() int { return len(t.accounts) }
