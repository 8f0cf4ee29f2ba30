# Names vulture (`.ci/run`: `vulture caretz benchmarks .ci/vulture_whitelist.py`) finds no
# use of in caretz/ and benchmarks/, each with why it stays. Everything else it reports
# is dead and is deleted. tests/test_ci_script.py fails on an entry without its reason.
# (Read by vulture, never run: `_` stands for any object.)

# -- called by Python itself -----------------------------------------------------------------
__getattr__  # a package's names found on first use (PEP 562): caretz, caretz.api, caretz.checkpoints
__dir__  # what dir() lists beside those names (PEP 562)
frame  # the signal handler's second parameter, which signal.signal passes (agent/signals.py)
exc_info  # __exit__'s parameters, which the with statement passes (api/session.py)

# -- called by the libraries caretz builds on ------------------------------------------------
_.on_connect  # the ACP SDK's Agent protocol: called by acp's connection (acp/agent.py)
_.authenticate  # ACP's authenticate request, dispatched by the SDK
_.load_session  # ACP's session/load request, dispatched by the SDK
_.set_session_mode  # ACP's session/set_mode request, dispatched by the SDK
_.set_config_option  # ACP's session/set_config_option request, dispatched by the SDK
client_info  # a keyword of ACP's initialize request: the SDK passes it, caretz reads none
method_id  # a keyword of ACP's authenticate request: the SDK passes it
main_command  # a Typer command: registered by its decorator, called by Typer (cli/)
config_show  # a Typer command (caretz config show)
sessions_list  # a Typer command (caretz sessions list)
sessions_show  # a Typer command (caretz sessions show)
mcp_list  # a Typer command (caretz mcp list)
mcp_approve  # a Typer command (caretz mcp approve)
mcp_login  # a Typer command (caretz mcp login)
mcp_logout  # a Typer command (caretz mcp logout)
hooks_list  # a Typer command (caretz hooks list)
hooks_approve  # a Typer command (caretz hooks approve)
worktree_list  # a Typer command (caretz worktree list)
agents_list  # a Typer command (caretz agents list)
skills_list  # a Typer command (caretz skills list)
worktree_remove  # a Typer command (caretz worktree remove)
plugin_install  # a Typer command (caretz plugin install)
plugin_list  # a Typer command (caretz plugin list)
plugin_remove  # a Typer command (caretz plugin remove)
plugin_enable  # a Typer command (caretz plugin enable)
plugin_disable  # a Typer command (caretz plugin disable)
schedule_add  # a Typer command (caretz schedule add)
schedule_list  # a Typer command (caretz schedule list)
schedule_remove  # a Typer command (caretz schedule remove)
schedule_run  # a Typer command (caretz schedule run)
replay_command  # a Typer command (caretz guard replay)
eval_command  # a Typer command (caretz guard eval)
guard_callback  # the Typer group's callback (caretz guard)
_.collect_usage_pieces  # a click.Command method overridden for the usage line (eval/cli.py)
_.format_options  # a click.Command method overridden for the help's options (eval/cli.py)
model_config  # pydantic's class-level model configuration
padding  # statusLine's Claude Code key, taken so its settings carry over (config/schema.py)
_.settings_customise_sources  # pydantic-settings' hook: which sources a setting comes from
env_settings  # parameters pydantic-settings passes to settings_customise_sources
dotenv_settings  # a parameter pydantic-settings passes to settings_customise_sources
file_secret_settings  # a parameter pydantic-settings passes to settings_customise_sources
_._load_env_vars  # pydantic-settings' EnvSettingsSource method, overridden (config/env.py)
_._endpoint  # a pydantic validator, run by pydantic when a profile is read (config/schema.py)
_._names_without_slash  # a pydantic validator (config/schema.py)
_._valid_duration  # a pydantic validator (guard/config.py)
_._levels  # pydantic validators (guard/detectors_config.py)
_._two_or_off  # a pydantic validator (guard/detectors_config.py)
_._repeats  # pydantic validators (guard/detectors_config.py)
_._only_a_command_is_read  # a pydantic validator (hooks/config.py)
_._not_blank  # a pydantic validator (hooks/config.py)
_._only_the_user_leaves_the_sandbox  # a pydantic validator (hooks/config.py)
_._a_command_has_one  # a pydantic validator (hooks/config.py)
_._a_regex  # a pydantic validator (hooks/config.py)
_._set_aside_claude_code_events  # a pydantic validator (hooks/config.py)
_._only_commands_decide  # a pydantic validator (hooks/config.py)
_._one_transport  # a pydantic validator (mcp_client/config.py)
_._secret_has_client  # a pydantic validator (mcp_client/config.py)
_.async_auth_flow  # httpx2.Auth's flow, which httpx2 calls (mcp_client/oauth.py LoginCheck)
_.token_expiry_time  # the SDK's OAuthContext field, which its provider reads (mcp_client/oauth.py)
_.get_tokens  # the SDK's TokenStorage protocol, called by its provider (mcp_client/oauth.py)
_.set_tokens  # the SDK's TokenStorage protocol
_.get_client_info  # the SDK's TokenStorage protocol
_.set_client_info  # the SDK's TokenStorage protocol
_._pins_are_addresses  # a pydantic validator (sandbox/config.py)
_._backend_needs  # a pydantic validator (web/config.py)
_.get_completions  # prompt_toolkit's Completer method, called as the user types (ui/)
complete_event  # a parameter prompt_toolkit passes to get_completions
_paste  # a prompt_toolkit key binding, registered by its decorator (ui/prompt_input.py)
_newline  # a prompt_toolkit key binding (ui/prompt_input.py)
_shift_tab  # a prompt_toolkit key binding: Shift+Tab cycles the modes (ui/prompt_input.py)
_.store_string  # prompt_toolkit's FileHistory method, called as a line is kept (ui/paste_input.py)
_continued_line  # a prompt_toolkit key binding (ui/prompt_input.py)
_ctrl_c  # a prompt_toolkit key binding (ui/prompt_input.py)
_.whitespace_split  # a shlex.shlex setting its iteration reads (permissions/patterns.py)
_.commenters  # a shlex.shlex setting its iteration reads (permissions/patterns.py)
_.hostnames  # an xllamacpp CommonParams field the llama.cpp server reads (providers/local_runner.py)
_.verbosity  # an xllamacpp CommonParams field the server reads
_.n_parallel  # an xllamacpp CommonParams field the server reads
_.n_ctx  # an xllamacpp CommonParams field the server reads
_.n_threads  # xllamacpp CommonParams fields the server reads (both thread counts)
_.use_jinja  # an xllamacpp CommonParams field the server reads

# -- fields of data written out or read in -------------------------------------------------
session_start  # a hooks-section key (SessionStart): read from the file, looked up by event name
user_prompt_submit  # a hooks-section key (UserPromptSubmit)
pre_tool_use  # a hooks-section key (PreToolUse)
post_tool_use  # a hooks-section key (PostToolUse)
post_tool_use_failure  # a hooks-section key (PostToolUseFailure)
notification  # a hooks-section key (Notification)
subagent_stop  # a hooks-section key (SubagentStop)
pre_compact  # a hooks-section key (PreCompact)
session_end  # a hooks-section key (SessionEnd)
loop_guard_judged  # a hooks-section key (LoopGuardJudged)
loop_guard_stopped  # a hooks-section key (LoopGuardStopped)
status_message  # Claude Code's hook key statusMessage: accepted so its settings load
latency_mean_s  # a CallStats field, written to `guard eval`'s JSON by its to_json (__dict__)
latency_p95_s  # a CallStats field written to the report's JSON
input_tokens_mean  # a CallStats field written to the report's JSON
output_tokens_mean  # a CallStats field written to the report's JSON
cost_mean_usd  # a CallStats field written to the report's JSON
cost_total_usd  # a CallStats field written to the report's JSON
also  # a LoopGuard.Judging record field: a key of the session log's line (session/records/guard.py)
turn_changed  # a Checkpoint field: the files a turn changed, set from the log, read by tests

# -- called by Harbor, which loads caretz.integrations.harbor:CaretzAgent by its path ---------------
CaretzAgent  # the class Harbor loads by its path (`--agent-import-path`)
options_model  # CaretzAgent's agent kwargs, which Harbor validates (harbor's BaseAgent.parse_options)
get_version_command  # CaretzAgent: the command Harbor runs for the installed version
parse_version  # CaretzAgent: Harbor reads the version from that command's output
configure  # CaretzAgent: Harbor's step after install (the `config` kwarg uploaded)
populate_context_post_run  # CaretzAgent: Harbor fills the trial's context after the run

# -- a benchmark's record ---------------------------------------------------------------------
comment  # a LocalImport field benchmarks/code_shape.py reports on

# -- kept for the tests, which check through them what the product does another way ------------
EXIT_CODES  # the README's exit codes, each checked against a real run (tests/e2e/test_headless.py)
start_session  # Session.open with positional arguments, the tests' in-process session
is_lazy  # whether a class is a lazy dataclass, for tests/test_lazy_dataclass.py
load_rules  # the rules from a profile and a project at once, for the permission tests
load_parser  # loads the bash grammar ahead, for benchmarks/rules.py's first-read figure
require_backend  # a sandbox check's backend or its error, for tests/sandbox/test_detect.py
_.is_hidden  # whether the sandbox hides a path, for tests/sandbox/test_paths.py
unix_socket_filter  # the seccomp filter's bytes alone, for tests/sandbox/test_seccomp.py
MAX_RESULT_CHARS  # the largest cap a result gets, for the tool tests' big outputs
loaded_with  # benchmarks/code_shape.py's import graph, which tests/test_architecture.py reads
sources_of  # benchmarks/code_shape.py's definitions of a name, read by tests/test_architecture.py
_.prune  # drops old sessions' checkpoints, for tests/checkpoints/test_sessions.py
