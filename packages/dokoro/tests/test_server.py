"""The unified server: every package's tools on one server, a true superset of core."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from dokoro.server import BRIDGE_PACKAGES, TOOL_PACKAGES, UNIFIED_TOOLS, create_unified_server
from dokoro_core.server import create_server
from dokoro_server import DokoroSettings, build_server
from mcp import Client

pytestmark = pytest.mark.anyio


def _settings(tmp_path: Path, **overrides: object) -> DokoroSettings:
    return DokoroSettings(path=tmp_path / "dokoro", **overrides)  # type: ignore[arg-type]


async def _tool_names(server) -> list[str]:
    async with Client(server) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


async def test_the_unified_server_serves_every_core_tool(tmp_path: Path) -> None:
    unified = await _tool_names(create_unified_server(_settings(tmp_path), cwd=tmp_path))
    core = await _tool_names(create_server(_settings(tmp_path), cwd=tmp_path))

    assert set(core) <= set(unified)
    assert set(core) >= REFERENCE_CORE_TOOLS, sorted(REFERENCE_CORE_TOOLS - set(core))


# The 45 tools of the original core server (reference §1.4): an agent prompt written for it must
# find every one of them, under the same name.
REFERENCE_CORE_TOOLS = {
    *("dokoro_workspace_status", "dokoro_workspace_claim", "dokoro_workspace_dump", "dokoro_session_log"),
    *("dokoro_session_recall", "dokoro_session_summary_add"),
    *("dokoro_regenerate_current", "dokoro_update_current_section", "dokoro_get_current_focus"),
    *("dokoro_question_add", "dokoro_question_answer", "dokoro_question_list", "dokoro_question_check"),
    *("dokoro_save_image", "dokoro_save_file", "dokoro_list_assets"),
    *("dokoro_plan_create", "dokoro_plan_check", "dokoro_plan_blocker", "dokoro_plan_validate"),
    *("dokoro_plan_status", "dokoro_plan_list"),
    *("dokoro_entity_graph", "dokoro_entity_extract_deep"),
    *("dokoro_feedback_record", "dokoro_feedback_query", "dokoro_feedback_route"),
    *("dokoro_shared_note_append", "dokoro_shared_note_read"),
    *("dokoro_block_write", "dokoro_block_read", "dokoro_block_list"),
    *("dokoro_handoff_write", "dokoro_handoff_inbox", "dokoro_handoff_claim"),
    *("dokoro_presence_ping", "dokoro_presence_list"),
    *("dokoro_file_claim", "dokoro_file_release", "dokoro_claim_list"),
    "dokoro_archive_sweep",
    *("dokoro_context_log", "dokoro_context_last", "dokoro_context_search"),
    "dokoro_init",
}


async def test_unified_tool_names_are_unique(tmp_path: Path) -> None:
    names = await _tool_names(create_unified_server(_settings(tmp_path), cwd=tmp_path))

    assert len(names) == len(set(names))


async def test_no_package_shadows_a_tool_of_another(tmp_path: Path) -> None:
    # The SDK keeps the first of two same-named tools and drops the other silently, so
    # register every package on a server of its own and compare. The one deliberate overlap is
    # the kit's task tools: tracking and analytics both serve that single implementation.
    from dokoro_server.task_tools import TASK_TOOL_NAMES

    owner: dict[str, str] = {}
    clashes: list[tuple[str, str, str]] = []
    for module_name in (*TOOL_PACKAGES, *UNIFIED_TOOLS):
        alone = build_server(_settings(tmp_path), name="alone", cwd=tmp_path)
        importlib.import_module(module_name).register(alone)
        for name in await _tool_names(alone):
            if name in owner and name not in TASK_TOOL_NAMES:
                clashes.append((name, owner[name], module_name))
            owner.setdefault(name, module_name)

    unified = await _tool_names(create_unified_server(_settings(tmp_path), cwd=tmp_path))

    assert clashes == []
    assert sorted(unified) == sorted(owner)
    assert {owner[name] for name in TASK_TOOL_NAMES} == {"dokoro_tracking.server"}


async def test_the_unified_server_is_named_dokoro_and_answers_a_tool_call(tmp_path: Path) -> None:
    async with Client(create_unified_server(_settings(tmp_path), cwd=tmp_path)) as client:
        assert client.server_info.name == "dokoro"
        claim = await client.call_tool("dokoro_workspace_claim", {"task": "Fix the flaky login test"})

    assert not claim.is_error, claim.content
    assert (tmp_path / "dokoro" / "current.md").is_file()


async def test_the_bridge_flag_adds_the_bridge_tools_to_everything_else(tmp_path: Path) -> None:
    plain = await _tool_names(create_unified_server(_settings(tmp_path), cwd=tmp_path))
    bridged = await _tool_names(create_unified_server(_settings(tmp_path, enable_tachibot_bridge=True), cwd=tmp_path))

    assert BRIDGE_PACKAGES
    assert set(bridged) - set(plain) == {"bridge_index_research", "bridge_import_plan", "bridge_get_context"}
    assert set(plain) < set(bridged)


# The tools of the original tracking (16) and analytics (8) servers, two of them shared (§1.4).
REFERENCE_TRACKING_ANALYTICS_TOOLS = {
    *("dokoro_issue_add", "dokoro_issue_list", "dokoro_issue_work", "dokoro_issue_complete"),
    *("dokoro_feature_add", "dokoro_feature_list", "dokoro_feature_start", "dokoro_feature_plan"),
    *("dokoro_weekly_add_item", "dokoro_weekly_sync", "dokoro_weekly_status"),
    *("dokoro_backup_verify", "dokoro_restore_items", "dokoro_health_check"),
    *("dokoro_task_track", "dokoro_task_list"),
    *("dokoro_feature_status", "dokoro_pending", "dokoro_velocity_insights", "dokoro_timeline"),
    *("dokoro_test_checklist", "dokoro_compress_week"),
}


async def test_the_unified_server_serves_tracking_analytics_and_test_connection(tmp_path: Path) -> None:
    async with Client(create_unified_server(_settings(tmp_path, agent_id="ana"), cwd=tmp_path)) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        answer = await client.call_tool("test_connection", {})

    assert set(names) >= REFERENCE_TRACKING_ANALYTICS_TOOLS
    assert names.count("dokoro_task_track") == 1
    assert not answer.is_error
    assert answer.content[0].text.startswith("### ✅ Server is working!")
    assert answer.structured_content["path"] == "dokoro"  # relative to the served project, never absolute
    assert answer.structured_content["backend"] == "sqlite"
    assert answer.structured_content["agent_id"] == "ana"
