package day1

import (
	"fmt"
	"strings"

	"github.com/day1ai/day1/store"
)

// MaxTenantNameLen is the longest tenant name, in bytes.
const MaxTenantNameLen = 63

// tenantNameRule says what a tenant name may be, in every error about one.
const tenantNameRule = "must be 1 to 63 lowercase ASCII letters, digits, '-' or '_', starting with a letter or a digit " +
	"(names are compared byte for byte: nothing is case-folded or normalised, so use lower case)"

// ValidateTenantName checks a tenant name: 1 to 63 lowercase ASCII letters (a-z),
// digits, '-' and '_', starting with a letter or a digit, and not a device name of
// Windows (con, prn, aux, nul, com0 to com9, lpt0 to lpt9). Upper case, dots, slashes,
// spaces, quotes and every non-ASCII character are refused rather than folded, so two
// distinct names never reach the same memory and a name is a safe folder name and
// database name on every system. A refused name is a *ValidationError for the field
// "tenant". Tenants calls it on every name it is given.
func ValidateTenantName(name string) error {
	return checkTenantName("tenant", name)
}

func checkTenantName(field, name string) error {
	if len(name) == 0 || len(name) > MaxTenantNameLen {
		return store.Invalid(field, tenantNameRule, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '-' || c == '_') && i > 0:
		default:
			return store.Invalid(field, tenantNameRule, name)
		}
	}
	if windowsDevice(name) {
		return store.Invalid(field, "is the name of a device on Windows (con, prn, aux, nul, com0-com9, lpt0-lpt9), which cannot be a folder there; choose another name", name)
	}
	return nil
}

// windowsDevice reports whether name is one of the names Windows reserves for
// devices. They are refused everywhere so that a memory can move between systems.
func windowsDevice(name string) bool {
	switch name {
	case "con", "prn", "aux", "nul":
		return true
	}
	if len(name) == 4 && (strings.HasPrefix(name, "com") || strings.HasPrefix(name, "lpt")) {
		return '0' <= name[3] && name[3] <= '9'
	}
	return false
}

// A tenant's MatrixOne database is its name after a prefix, with '-' written "__"
// and '_' written "_u": letters and digits stand for themselves and every escape is
// two characters starting with '_', so the mapping is injective and reversible, and
// its result is a database name of letters, digits and underscores.
func tenantDatabaseSuffix(name string) string {
	var b strings.Builder
	b.Grow(2 * len(name))
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '-':
			b.WriteString("__")
		case '_':
			b.WriteString("_u")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// tenantFromDatabaseSuffix reverses tenantDatabaseSuffix. It reports false for a
// suffix that no valid tenant name maps to.
func tenantFromDatabaseSuffix(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(s) {
			return "", false
		}
		i++
		switch s[i] {
		case '_':
			b.WriteByte('-')
		case 'u':
			b.WriteByte('_')
		default:
			return "", false
		}
	}
	name := b.String()
	if ValidateTenantName(name) != nil || tenantDatabaseSuffix(name) != s {
		return "", false
	}
	return name, true
}

// tenantDatabase returns the database of a tenant under prefix, or a
// *ValidationError when it would be longer than the 64 characters MatrixOne allows.
func tenantDatabase(field, prefix, name string) (string, error) {
	db := prefix + tenantDatabaseSuffix(name)
	if len(db) > maxDatabaseLen {
		return "", store.Invalid(field, fmt.Sprintf("maps to the MatrixOne database %s of %d characters, more than the %d allowed "+
			"(each '-' and '_' takes two); choose a shorter name or a shorter TenantsConfig.DatabasePrefix", db, len(db), maxDatabaseLen), name)
	}
	return db, nil
}

// maxDatabaseLen is the longest database name of MatrixOne (and MySQL).
const maxDatabaseLen = 64
