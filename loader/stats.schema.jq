# jq program: the schema of "splitctl -j stats" (exits false when violated).
# One object; every FS_STATS name of bpf/flowsplit.h as a key; every value a
# non-negative integer counter summed over CPUs.
(keys == ([
  "packets_short", "bytes_short", "packets_long", "bytes_long",
  "flows_new", "flows_promoted", "flows_expired", "flows_swept",
  "pass_non_tcp", "pass_fragment", "pass_non_ip", "pass_malformed",
  "pass_ext_hdr_limit", "pass_disabled", "insert_failures", "acks_short",
  "flows_promoted_packets", "flows_promoted_bytes", "flows_reshort",
  "rule_matches", "flows_midstream", "flows_reshort_gap", "flows_reshort_boundary",
  "packets_spill", "bytes_spill", "spill_flows"
] | sort)) and all(.[]; type == "number" and . >= 0 and . == floor)
