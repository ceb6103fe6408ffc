package acl

// CheckAccess decides a request of a protocol that signs otherwise than
// remoting (the gRPC door's MQv2-HMAC-SHA1 over its date): accessKey
// signed it ("" when unsigned), verify reports whether its signature is
// that of a secret key, and rs are what it needs. It decides in Check's
// order, with the same accounts; nil or an *Error.
func (c *Checker) CheckAccess(remote, accessKey string, verify func(secretKey string) bool, rs []Resource) error {
	return c.table.Load().checkAccess(remote, accessKey, verify, rs)
}

func (t *Table) checkAccess(remote, ak string, verify func(string) bool, rs []Resource) error {
	ip := RemoteIP(remote)
	for _, p := range t.global {
		if p.match(ip) {
			return nil
		}
	}
	if ak == "" {
		return refuse("No accessKey is configured")
	}
	acc := t.accounts[ak]
	if acc == nil {
		return refuse("No acl config for %s", ak)
	}
	if acc.white != nil && acc.white.match(ip) {
		return nil
	}
	if !verify(acc.secretKey) {
		return refuse("Check signature failed for accessKey=%s", ak)
	}
	if acc.admin {
		return nil
	}
	return acc.permits(rs)
}

// permits decides each resource against the account's permissions, or
// else its defaults.
func (acc *account) permits(rs []Resource) error {
	for _, r := range rs {
		// Java lets the message trace topic through for any signed account.
		if r.Name == traceTopic && r.Perm == Pub {
			return nil
		}
	}
	for _, r := range rs {
		owned, named := acc.perms[r.Name]
		if !named {
			owned = acc.defTopic
			if r.IsGroup() {
				owned = acc.defGroup
			}
			if !owned.grants(r.Perm) {
				return refuse("No default permission for %s", r)
			}
			continue
		}
		if !owned.grants(r.Perm) {
			return refuse("No permission for %s", r)
		}
	}
	return nil
}

// GroupResource names a consumer group as a Resource.
func GroupResource(group string, p Perm) Resource {
	return Resource{Name: retryPrefix + group, Perm: p}
}
