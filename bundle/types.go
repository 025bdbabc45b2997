package bundle

import (
	"slices"
	"time"
)

// Type says where a bundle's records came from.
type Type string

// Bundle types.
const (
	// TaskExport: what a task's branch added since it was forked.
	TaskExport Type = "task_export"
	// Curated: a branch's records as it reads now.
	Curated Type = "curated"
	// TemplateExport: the records of a template's current version.
	TemplateExport Type = "template"
)

// Valid reports whether t is a known bundle type.
func (t Type) Valid() bool { return t == TaskExport || t == Curated || t == TemplateExport }

// Status is a bundle's verification status.
type Status string

// Bundle statuses.
const (
	// Draft: not judged, or judged below the policy's threshold.
	Draft Status = "draft"
	// Verified: Engine.Verify judged its content at or above the fact threshold.
	Verified Status = "verified"
	// Published: marked for others to use (Engine.Publish).
	Published Status = "published"
)

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return s == Draft || s == Verified || s == Published }

// Visibility says who may resolve a bundle by its share token.
type Visibility string

// Visibilities.
const (
	// Private: no share token; reachable by id only.
	Private Visibility = "private"
	// Team: a share token resolves it; not listed as public.
	Team Visibility = "team"
	// Public: a share token resolves it, and it is listed with the public bundles.
	Public Visibility = "public"
)

// Valid reports whether v is a known visibility.
func (v Visibility) Valid() bool { return v == Private || v == Team || v == Public }

// Info describes a bundle; it travels in every bundle file's manifest.
type Info struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Description  string            `json:"description,omitempty"`
	Type         Type              `json:"type"`
	SourceTask   string            `json:"source_task,omitempty"`
	SourceBranch string            `json:"source_branch,omitempty"`
	Version      string            `json:"version"`
	Status       Status            `json:"status"`
	VerifiedBy   string            `json:"verified_by,omitempty"`
	Score        float64           `json:"verification_score,omitempty"`
	Tags         []string          `json:"tags,omitempty"`
	Metadata     map[string]string `json:"metadata,omitempty"`
	Owner        string            `json:"owner,omitempty"`
	CreatedAt    time.Time         `json:"created_at"`
}

// Bundle is a stored bundle: its description, what it holds, and how it is shared.
type Bundle struct {
	Info
	// Counts are its records, by kind.
	Counts Counts `json:"counts"`
	// Embedder names the embedder of its records' embeddings; empty when they carry
	// none.
	Embedder EmbedderInfo `json:"embedder,omitzero"`
	// Hash is the SHA-256 of its content, as its file's seal says.
	Hash string `json:"hash"`
	// Size is the length of its file, gzip-compressed, in bytes.
	Size int64 `json:"size"`
	// Visibility says who may resolve it by ShareToken.
	Visibility Visibility `json:"visibility"`
	// ShareToken resolves the bundle (Engine.Shared) while Visibility is team or
	// public; empty while it is private. Each change to team or public from private
	// issues a new token; the old one never works again.
	ShareToken string `json:"share_token,omitempty"`
	// VerifiedAt is when Engine.Verify last judged it.
	VerifiedAt time.Time `json:"verified_at,omitzero"`
	// UpdatedAt is when it last changed.
	UpdatedAt time.Time `json:"updated_at"`
}

// HasTags reports whether the bundle carries every tag of tags.
func (b Bundle) HasTags(tags []string) bool {
	for _, t := range tags {
		if !slices.Contains(b.Tags, t) {
			return false
		}
	}
	return true
}
