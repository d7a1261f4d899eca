package pdpptest

import "net/http"

// Protected-resource metadata (RFC 9728): GET
// /.well-known/oauth-protected-resource and its /mcp variant.
// No bearer needed.
//
// The document has the reference's shape, key order and values, with every
// URL built from the host the client called. The double plays its own
// authorization server and discovery origin, so those URLs name it too.
// It advertises what the reference advertises; the owner control plane and
// event subscriptions it lists are not served by the double (they answer 501
// or 404). Semantic and hybrid retrieval are advertised only when mounted:
// an absent capability means unsupported, as in the reference.

// providerConnectVersion is pdpp_provider_connect_version.
const providerConnectVersion = "draft-2026-04-16"

func (s *Server) mountMetadata(m *http.ServeMux) {
	m.HandleFunc("GET /.well-known/oauth-protected-resource", s.public(s.handleResourceMetadata))
	m.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.public(s.handleResourceMetadataMCP))
}

// metadataBase is the public base URL as the client reached the double.
func metadataBase(r *http.Request) string { return "http://" + r.Host }

// baseMetadata holds the RFC 9728 fields both documents share.
func (s *Server) baseMetadata(base, resource, name string, kinds []string) *object {
	return obj(
		"authorization_servers", []string{base},
		"bearer_methods_supported", []string{"header"},
		"pdpp_core_query_base", base+"/v1",
		"pdpp_provider_connect_version", providerConnectVersion,
		"pdpp_self_export_supported", true,
		"pdpp_token_kinds_supported", kinds,
		"resource", resource,
		"resource_name", name,
	)
}

// handleResourceMetadata answers the resource server's document. It is not a
// read answer, so it gets no links or meta.
func (s *Server) handleResourceMetadata(c *call) error {
	base := metadataBase(c.r)
	doc := s.baseMetadata(base, base, s.ds.Provider+" Resource Server", []string{"owner", "client"})
	doc.set("pdpp_discovery_hints", s.discoveryHints())
	doc.set("pdpp_agent_discovery", agentDiscovery(base))
	doc.set("pdpp_owner_agent_onboarding", ownerAgentOnboarding(base))
	doc.set("capabilities", s.retrievalCapabilities())
	writeJSON(c.w, http.StatusOK, doc)
	return nil
}

// handleResourceMetadataMCP answers the hosted MCP resource's document: the
// same builder with the /mcp resource and the token kinds /mcp accepts, and
// no capabilities or hints.
func (s *Server) handleResourceMetadataMCP(c *call) error {
	base := metadataBase(c.r)
	writeJSON(c.w, http.StatusOK, s.baseMetadata(base, base+"/mcp", s.ds.Provider+" Hosted MCP Resource", []string{"client", "mcp_package"}))
	return nil
}

func (s *Server) hybridMounted() bool { return !s.opts.DisableSemantic && !s.opts.DisableHybrid }

func (s *Server) discoveryHints() *object {
	h := obj(
		"aggregate", obj("endpoint_template", "/v1/streams/{stream}/aggregate"),
		"blob_indirection", "data.blob_ref.fetch_url",
		"changes_since_bootstrap", "beginning",
		"connectors_endpoint", "/v1/connectors",
		"query_base", "/v1",
		"schema_endpoint", "/v1/schema",
		"streams_endpoint_template", "/v1/streams/{stream}",
		"search", obj("endpoint", "/v1/search", "filter_requires_single_stream", true, "scope_param", "streams[]"),
	)
	h.setIf(s.hybridMounted(), "hybrid_pagination_supported", false)
	h.set("owner_polyfill_requires_source_kind_connector", true)
	return h
}

// retrievalCapabilities lists lexical retrieval always, semantic when its
// route is mounted, hybrid when both are, and the event-subscription
// extension the reference advertises.
func (s *Server) retrievalCapabilities() *object {
	caps := obj("lexical_retrieval", obj(
		"count_supported", false, "cross_stream", true, "cursor_supported", true,
		"default_limit", searchDefaultLimit, "endpoint", "/v1/search", "max_limit", searchMaxLimit,
		"snippets", true, "supported", true, "index_state", "built",
		"score", obj("kind", "bm25", "order", "lower_is_better", "supported", true, "value_semantics", "implementation_relative"),
	))
	if !s.opts.DisableSemantic {
		caps.set("semantic_retrieval", obj(
			"count_supported", false, "cross_stream", true, "cursor_supported", true,
			"default_limit", searchDefaultLimit, "dimensions", semanticDimensions, "distance_metric", "cosine",
			"endpoint", "/v1/search/semantic", "index_state", "built", "lexical_blending", false,
			"max_limit", searchMaxLimit, "model", semanticModel, "query_input", "text", "snippets", true,
			"stability", "experimental", "supported", true,
			"score", obj(
				"comparable_with", obj(
					"backend_identity", "profile=stub;model="+semanticModel+";dimensions=64;metric=cosine",
					"dimensions", semanticDimensions, "distance_metric", "cosine", "model", semanticModel, "profile_id", "stub"),
				"kind", "semantic_distance", "order", "lower_is_better", "supported", true, "value_semantics", "distance"),
		))
	}
	if s.hybridMounted() {
		caps.set("hybrid_retrieval", obj(
			"count_supported", false, "cross_stream", true, "cursor_supported", false,
			"default_limit", searchDefaultLimit, "endpoint", "/v1/search/hybrid", "max_limit", searchMaxLimit,
			"sources", []string{"lexical", "semantic"}, "stability", "experimental", "supported", true,
		))
	}
	caps.set("client_event_subscriptions", eventSubscriptions())
	return caps
}

// agentDiscovery is the advisory pdpp_agent_discovery block, including the
// hint agents use to find the grant-scoped MCP endpoint.
func agentDiscovery(base string) *object {
	return obj(
		"advisory", true,
		"cli", obj(
			"bin_name", "pdpp",
			"connect_command", "npx -y @pdpp/cli connect <provider-url>",
			"install_command", "npx -y @pdpp/cli --help",
			"no_owner_token", false,
			"no_owner_token_policy", "requires_native_reference_provider_for_one_command_connect",
			"package", "@pdpp/cli",
			"package_specifier", "@pdpp/cli",
			"run_command", "npx -y @pdpp/cli connect "+base,
			"version_policy", "latest",
		),
		"recommended_flow", "pdpp connect",
		"skill_name", "pdpp-data-access",
		"skill", base+"/.well-known/skills/pdpp-data-access/SKILL.md",
		"skill_catalog", base+"/.well-known/skills/index.json",
		"mcp", obj(
			"endpoint", base+"/mcp",
			"no_owner_token", true,
			"setup_intent", "grant_scoped_read",
			"tool_surface", "profile_free_normal_read",
			"transport", "streamable_http",
			"authorization", obj(
				"authorization_code_pkce", obj(
					"authorization_endpoint", base+"/oauth/authorize",
					"flow", "authorization_code_pkce",
					"pdpp_token_kind", "client",
					"resource", base+"/mcp",
					"resource_parameter", "required",
				),
				"device_code", obj(
					"authorization_details_type", "https://pdpp.dev/data-access",
					"device_authorization_endpoint", base+"/oauth/device_authorization",
					"flow", "device_code",
					"grant_type", "urn:ietf:params:oauth:grant-type:device_code",
					"owner_bearer_accepted", false,
					"pdpp_token_kind", "client",
					"required_parameters", []string{"client_id", "resource", "authorization_details"},
					"resource", base+"/mcp",
					"token_endpoint", base+"/oauth/token",
				),
				"owner_agent_device_code", obj(
					"advertised_in", "pdpp_owner_agent_onboarding",
					"flow", "device_code",
					"mcp_owner_bearer_rejected", true,
					"normal_mcp_setup", false,
					"pdpp_token_kind", "owner",
				),
			),
		),
		"llms_full_txt", base+"/llms-full.txt",
		"llms_txt", base+"/llms.txt",
	)
}

// ownerAgentOnboarding is the advisory trusted-owner-agent block. The action
// families, methods, statuses and URLs are the reference's; the reasons are
// ours and say what the double does.
func ownerAgentOnboarding(base string) *object {
	conn := base + "/v1/owner/connections/{connection_id}"
	notServed := " The double does not serve it (501)."
	action := func(family string, method any, reason, status string, url any) *object {
		return obj("family", family, "method", method, "reason", reason, "status", status, "url", url)
	}
	actions := []any{
		action("discover_control_capabilities", "GET", "Describe the owner control surface."+notServed, "supported", base+"/v1/owner/control"),
		action("list_connector_templates", "GET", "List the connectors an owner can connect."+notServed, "supported", base+"/v1/owner/connector-templates"),
		action("list_connections", "GET", "List configured connections with their connection_id and label."+notServed, "supported", base+"/v1/owner/connections"),
		action("initiate_connection", "POST", "Start connecting a new account."+notServed, "supported", base+"/v1/owner/connections/intents"),
		action("rename_connection", "PATCH", "Change a connection's display_name."+notServed, "supported", conn),
		action("run_connection", "POST", "Collect now for one connection."+notServed, "supported", conn+"/run"),
		action("cancel_run", nil, "Cancel a running collection; owner-mediated only, so no URL is advertised.", "owner_mediated", nil),
		action("manage_schedule", "POST", "Pause, resume or delete a connection's schedule."+notServed, "supported", conn+"/schedule/pause"),
		action("inspect_diagnostics", "GET", "Read one connection's health and last run."+notServed, "supported", conn+"/diagnostics"),
		action("manage_event_subscriptions", "GET", "List and create webhook subscriptions."+notServed, "supported", base+"/v1/event-subscriptions"),
		action("delete_connection", "DELETE", "Erase a connection's data and configuration."+notServed, "supported", conn),
		action("revoke_connection", "POST", "Stop future collection for a connection, keeping its data."+notServed, "supported", conn+"/revoke"),
	}
	return obj(
		"advisory", true,
		"authorization_server", base,
		"control_surface", obj(
			"actions", actions,
			"entrypoint", base+"/v1/owner/control",
			"mcp_owner_bearer_rejected", true,
			"object", "owner_agent_control_surface",
			"scope", "reference_implementation",
		),
		"device_authorization_endpoint", base+"/oauth/device_authorization",
		"event_subscriptions_endpoint", base+"/v1/event-subscriptions",
		"introspection_endpoint", base+"/introspect",
		"mcp_owner_bearer_rejected", true,
		"owner_approval_url", base,
		"pdpp_token_kind", "owner",
		"profile", "trusted_owner_agent",
		"query_base", base+"/v1",
		"registration_endpoint", base+"/oauth/register",
		"resource", base,
		"revocation_path_template", base+"/oauth/register/{client_id}",
		"schema_compact_endpoint", base+"/v1/schema?view=compact",
		"schema_endpoint", base+"/v1/schema",
		"streams_endpoint", base+"/v1/streams",
		"token_endpoint", base+"/oauth/token",
		"warning", "Owner bearers reach everything the owner can; give ordinary agents a grant-scoped client token through MCP instead.",
	)
}

// eventSubscriptions is the reference's webhook extension advertisement.
func eventSubscriptions() *object {
	return obj(
		"authority_kinds_supported", []string{"client_grant", "trusted_owner_agent"},
		"callback_url", obj("https_required", true, "localhost_exception", true),
		"delivery", obj(
			"after_commit", true, "at_least_once", true, "coalescing", false,
			"dead_letter_state", "disabled_failure", "max_attempts", 6, "response_window_seconds", 10,
			"retry_schedule_seconds", []int{30, 120, 600, 3600, 21600, 86400},
		),
		"endpoint", "/v1/event-subscriptions",
		"envelope", obj(
			"content_type", "application/cloudevents+json; charset=utf-8",
			"fields", []string{"specversion", "pdppversion", "id", "type", "source", "time", "data"},
			"format", "cloudevents+json", "no_record_bodies", true, "pdppversion", "1", "specversion", "1.0",
			"subscription_id_location", "data.subscription_id",
		),
		"event_types", []string{"pdpp.subscription.verify", "pdpp.subscription.test", "pdpp.records.changed", "pdpp.grant.revoked"},
		"hint_cursor", obj("cursor_field", "data.changes_since", "read_endpoint_template", "/v1/streams/{stream}/records?changes_since={cursor}"),
		"limits", obj("callback_url_max_bytes", 2048, "response_snippet_capture_bytes", 512),
		"scope", "reference_implementation",
		"signing", obj(
			"algorithm", "HMAC-SHA256", "id_header", "webhook-id", "profile", "standard-webhooks",
			"secret_payload_encoding", "base64", "secret_prefix", "whsec_", "signature_encoding", "v1,<base64>",
			"signature_header", "webhook-signature", "signed_payload", "{webhook-id}.{webhook-timestamp}.{body}",
			"timestamp_header", "webhook-timestamp",
		),
		"stability", "reference_extension",
		"supported", true,
		"transport", "https_webhook",
		"verification", obj("challenge_event_type", "pdpp.subscription.verify", "handshake", "post_with_challenge_echo"),
	)
}
