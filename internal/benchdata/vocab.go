package benchdata

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// A template writes one sentence with slots filled from r.
type template func(r *rand.Rand) string

func pick(r *rand.Rand, xs []string) string { return xs[r.IntN(len(xs))] }

// num returns a number between lo and hi inclusive.
func num(r *rand.Rand, lo, hi int) int { return lo + r.IntN(hi-lo+1) }

func service(r *rand.Rand) string { return pick(r, domains) + " " + pick(r, serviceKinds) }

// theService returns a service name such as "the auth service", capitalised when first.
func theService(r *rand.Rand, first bool) string {
	s := "the " + service(r)
	if first {
		s = "The" + s[3:]
	}
	return s
}

func column(r *rand.Rand) string { return pick(r, tables) + "." + pick(r, columns) }

func file(r *rand.Rand) string {
	return pick(r, dirRoots) + "/" + pick(r, domains) + "/" + pick(r, fileNames)
}

func function(r *rand.Rand) string {
	d := pick(r, domains)
	return pick(r, verbs) + strings.ToUpper(d[:1]) + d[1:] + pick(r, nouns)
}

func testName(r *rand.Rand) string {
	d := pick(r, domains)
	v := pick(r, verbs)
	return "Test" + strings.ToUpper(d[:1]) + d[1:] + strings.ToUpper(v[:1]) + v[1:] + pick(r, nouns)
}

func envVar(r *rand.Rand) string {
	return strings.ToUpper(pick(r, domains) + "_" + pick(r, envSuffixes))
}

func version(r *rand.Rand) string {
	return fmt.Sprintf("%d.%d.%d", num(r, 1, 9), num(r, 0, 30), num(r, 0, 15))
}

func endpoint(r *rand.Rand) string {
	return fmt.Sprintf("/v%d/%s/%s", num(r, 1, 3), pick(r, tables), pick(r, pathTails))
}

var templates = []template{
	func(r *rand.Rand) string {
		return fmt.Sprintf("%s rejects expired %s tokens after the %d minute window",
			theService(r, true), pick(r, tokenKinds), num(r, 1, 120))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("Migration %d added an index on %s", num(r, 1, 900), column(r))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("%s returns %s when %s is unavailable", theService(r, true), pick(r, errorKinds), pick(r, techs))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("Retry budget for %s calls to %s is %d attempts with %dms backoff",
			theService(r, false), pick(r, techs), num(r, 1, 12), 50*num(r, 1, 40))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("%s reads %s and falls back to %d when it is unset", file(r), envVar(r), num(r, 1, 5000))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("The flaky test %s in %s fails when %s", testName(r), file(r), pick(r, conditions))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("Deploys of %s to %s require approval from the %s team",
			theService(r, false), pick(r, envs), pick(r, teams))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("%s caches %s rows in %s for %d seconds",
			theService(r, true), pick(r, tables), pick(r, techs), num(r, 5, 3600))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("Incident INC-%d: %s hit %s after %s",
			num(r, 1000, 9999), theService(r, false), pick(r, errorKinds), pick(r, changes))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("The user prefers %s in %s code for the %s", pick(r, prefs), pick(r, langs), service(r))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("%s publishes %s.%s events to the %s topic on %s",
			theService(r, true), pick(r, tables), pick(r, eventVerbs), pick(r, domains)+"-"+pick(r, topicSuffixes), pick(r, brokers))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("Rate limit on %s is %d requests per %s for %s clients",
			endpoint(r), 10*num(r, 1, 500), pick(r, units), pick(r, tiers))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("Setting %s to %d fixed %s in %s", envVar(r), num(r, 1, 10000), pick(r, errorKinds), theService(r, false))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("%s is nullable since release %s of %s", column(r), version(r), service(r))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("PR #%d moved %s from %s to %s", num(r, 100, 9999), function(r), file(r), file(r))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("Build of %s breaks with %s %s because of %s %s",
			theService(r, false), pick(r, langs), version(r), pick(r, deps), version(r))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("%s p99 latency is %dms at %d requests per second on %s",
			theService(r, true), num(r, 2, 2500), 50*num(r, 1, 400), pick(r, envs))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("The %s %s cluster runs version %s with %d replicas",
			pick(r, envs), pick(r, techs), version(r), num(r, 1, 48))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("Endpoint %s %s in %s needs the %s:%s scope",
			pick(r, methods), endpoint(r), theService(r, false), pick(r, tables), pick(r, scopes))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("%s logs %s at WARN level when %s exceeds %d rows",
			theService(r, true), pick(r, errorKinds), pick(r, tables), 1000*num(r, 1, 900))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("Feature flag %s_%s gates %s in %s",
			pick(r, domains), pick(r, flagSuffixes), pick(r, features), theService(r, false))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("Cron job %s-%s runs at %02d:%02d UTC and cleans %s older than %d days",
			pick(r, domains), pick(r, jobKinds), num(r, 0, 23), 5*num(r, 0, 11), pick(r, tables), num(r, 1, 400))
	},
	func(r *rand.Rand) string {
		a, b := pick(r, techs), pick(r, techs)
		for b == a {
			b = pick(r, techs)
		}
		return fmt.Sprintf("Decided to use %s instead of %s for %s in %s", a, b, pick(r, purposes), theService(r, false))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("%s health check on port %d times out after %d seconds in %s",
			theService(r, true), num(r, 1024, 9999), num(r, 1, 60), pick(r, envs))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("The %s team owns %s and rotates on-call every %s",
			pick(r, teams), theService(r, false), pick(r, weekdays))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("%s leaks memory in %s when %s, about %d MB per hour",
			theService(r, true), function(r), pick(r, conditions), num(r, 1, 900))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("Running %s on %s takes %d minutes because %s",
			pick(r, commands), file(r), num(r, 1, 90), pick(r, conditions))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("%s in %s panics with %s if %s is empty",
			function(r), file(r), pick(r, errorKinds), column(r))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("Ticket %s-%d: customers on the %s plan see %s from %s",
			strings.ToUpper(pick(r, domains)[:3]), num(r, 10, 9999), pick(r, tiers), pick(r, errorKinds), endpoint(r))
	},
	func(r *rand.Rand) string {
		return fmt.Sprintf("Agent %s-%d verified that %s handles %s after the %s upgrade",
			pick(r, agents), num(r, 1, 99), theService(r, false), pick(r, conditions), pick(r, techs))
	},
}

var domains = []string{
	"auth", "billing", "payments", "search", "notification", "inventory", "checkout",
	"gateway", "scheduler", "ingest", "export", "reporting", "user", "session", "cache",
	"queue", "webhook", "analytics", "audit", "email", "sms", "media", "upload",
	"recommendation", "pricing", "shipping", "catalog", "ledger", "fraud", "identity",
	"profile", "invoice", "refund", "subscription", "tenant", "geo", "translation",
	"moderation", "feed", "chat", "metrics", "tracing", "config", "secrets", "storage",
	"backup", "onboarding", "loyalty", "coupon", "tax",
}

var serviceKinds = []string{
	"service", "worker", "API", "gateway", "job", "proxy", "consumer", "controller",
	"pipeline", "sidecar", "daemon", "exporter",
}

var techs = []string{
	"Postgres", "MySQL", "MatrixOne", "Redis", "Memcached", "Kafka", "RabbitMQ", "NATS",
	"S3", "GCS", "Elasticsearch", "OpenSearch", "ClickHouse", "DynamoDB", "Cassandra",
	"etcd", "Consul", "Vault", "nginx", "Envoy", "gRPC", "GraphQL", "Kubernetes",
	"Terraform", "SQLite", "BigQuery", "Snowflake", "MongoDB", "Prometheus", "Jaeger",
}

var brokers = []string{"Kafka", "RabbitMQ", "NATS", "Pulsar", "SQS", "PubSub"}

var tables = []string{
	"orders", "customers", "invoices", "sessions", "users", "payments", "events",
	"shipments", "products", "carts", "refunds", "subscriptions", "accounts", "tokens",
	"audit_log", "coupons", "addresses", "reviews", "tenants", "api_keys", "webhooks",
	"line_items", "prices", "warehouses", "devices", "notifications", "jobs", "reports",
	"exports", "feature_flags",
}

var columns = []string{
	"id", "customer_id", "created_at", "updated_at", "status", "email", "amount_cents",
	"tenant_id", "external_ref", "expires_at", "deleted_at", "currency", "user_id",
	"order_id", "sku", "region", "retry_count", "last_seen_at", "plan", "locale",
	"idempotency_key", "version", "owner_id", "checksum", "priority",
}

var dirRoots = []string{"internal", "pkg", "cmd", "services", "lib", "api", "deploy", "scripts"}

var fileNames = []string{
	"handler.go", "client.go", "config.yaml", "middleware.go", "retry.go", "schema.sql",
	"server.go", "store.go", "worker.py", "main.go", "routes.ts", "index.ts", "values.yaml",
	"Dockerfile", "migrate.sql", "cache.go", "limits.go", "auth.go", "queue.go", "model.py",
	"settings.py", "README.md", "Makefile", "jobs.go", "metrics.go",
}

var verbs = []string{
	"validate", "parse", "refresh", "sync", "load", "flush", "encode", "decode",
	"resolve", "compute", "render", "dispatch", "reconcile", "enqueue", "retry", "expire",
}

var nouns = []string{
	"Token", "Invoice", "Batch", "Request", "Config", "Session", "Cursor", "Payload",
	"Snapshot", "Limit", "Schema", "Index", "Record", "Event", "Key",
}

var envSuffixes = []string{
	"TIMEOUT_MS", "MAX_CONNS", "POOL_SIZE", "BATCH_SIZE", "TTL_SECONDS", "RETRY_LIMIT",
	"WORKERS", "BUFFER_KB", "PORT", "LOG_LEVEL", "QUEUE_DEPTH", "CACHE_MB",
}

var tokenKinds = []string{"JWT", "OAuth", "refresh", "API", "session", "CSRF", "SAML", "OIDC"}

var errorKinds = []string{
	"connection refused", "deadlock detected", "context deadline exceeded",
	"401 Unauthorized", "403 Forbidden", "429 Too Many Requests", "502 Bad Gateway",
	"503 Service Unavailable", "OOMKilled", "TLS handshake timeout",
	"nil pointer dereference", "duplicate key violation", "too many open files",
	"broken pipe", "EOF", "lock wait timeout", "serialization failure",
	"invalid signature", "schema mismatch", "disk quota exceeded", "DNS lookup failure",
	"certificate expired", "checksum mismatch", "stack overflow", "index out of range",
}

var conditions = []string{
	"the clock skews by more than a second", "two requests share an idempotency key",
	"the cache is cold", "the database fails over", "the queue backs up",
	"tests run in parallel", "the locale is not English", "a tenant has no plan",
	"the payload exceeds 1 MB", "daylight saving time starts", "the replica lags",
	"the pod restarts mid-request", "the token is refreshed twice", "the disk is full",
	"the upstream returns HTML", "a column is NULL", "GOMAXPROCS is 1",
	"the network partitions", "retries overlap", "the config map is reloaded",
}

var envs = []string{"production", "staging", "dev", "eu-west", "us-east", "canary", "sandbox", "ap-south"}

var teams = []string{
	"platform", "payments", "growth", "infra", "security", "data", "mobile", "search",
	"identity", "sre", "frontend", "billing",
}

var changes = []string{
	"the Friday deploy", "a schema migration", "a config change", "the certificate rotation",
	"a traffic spike", "the library upgrade", "a node drain", "the region failover",
	"a feature flag flip", "the cache eviction policy change", "a DNS change",
}

var prefs = []string{
	"tabs over spaces", "table-driven tests", "early returns", "small pull requests",
	"explicit error wrapping", "no global state", "structured logging", "short functions",
	"descriptive variable names", "integration tests over mocks", "context as first argument",
	"errors.Is over string matching",
}

var langs = []string{"Go", "Python", "TypeScript", "Rust", "Java", "Kotlin", "SQL", "Bash"}

var eventVerbs = []string{"created", "updated", "deleted", "failed", "completed", "expired", "retried"}

var topicSuffixes = []string{"events", "changes", "dlq", "audit", "stream", "outbox"}

var units = []string{"second", "minute", "hour", "day"}

var tiers = []string{"free", "starter", "pro", "enterprise", "internal", "partner"}

var deps = []string{
	"protobuf", "grpc-go", "openssl", "glibc", "node-gyp", "numpy", "pydantic", "zod",
	"x/net", "sqlx", "pgx", "cgo", "webpack", "esbuild",
}

var methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

var pathTails = []string{"{id}", "search", "export", "bulk", "{id}/status", "{id}/items", "stats", "import"}

var scopes = []string{"read", "write", "admin", "export", "delete"}

var flagSuffixes = []string{"v2", "beta", "rollout", "kill_switch", "shadow", "canary", "new_ui"}

var features = []string{
	"the new checkout flow", "batch exports", "async refunds", "dark mode",
	"SSO login", "usage-based pricing", "the v2 search ranking", "multi-currency invoices",
	"webhook signing", "smart retries", "inline editing", "bulk imports",
}

var jobKinds = []string{"cleanup", "compaction", "reindex", "digest", "rollup", "reaper", "backfill"}

var purposes = []string{
	"rate limiting", "session storage", "job queues", "full-text search", "analytics",
	"leader election", "feature flags", "audit logs", "blob storage", "service discovery",
	"secrets", "caching", "event sourcing", "metrics",
}

var weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}

var commands = []string{
	"go test ./...", "make lint", "npm run build", "terraform plan", "pytest -x",
	"docker build", "helm upgrade", "cargo build --release", "go vet", "mypy",
}

var agents = []string{"coder", "reviewer", "tester", "planner", "triage", "oncall"}
