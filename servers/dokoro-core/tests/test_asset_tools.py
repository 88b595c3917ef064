"""dokoro_save_image, dokoro_save_file and dokoro_list_assets through an MCP client."""

from __future__ import annotations

import base64

import pytest

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR fake image bytes"
MILLIS = 1781130195000  # the frozen clock, 2026-06-10T22:23:15Z, in milliseconds


@pytest.fixture
def image(cwd):
    path = cwd / "shots" / "login.png"
    path.parent.mkdir(parents=True)
    path.write_bytes(PNG)
    return path


# ---------------------------------------------------------------------------------------------- images


async def test_save_image_copies_a_file_and_returns_a_markdown_reference(call, root, image):
    outcome = await call("dokoro_save_image", source=str(image), description="login screen")

    relative = f"assets/images/image-{MILLIS}.png"
    # Answers name files relative to the project the server serves (the store is its dokoro/ folder).
    assert outcome.structured_content == {
        "path": f"dokoro/{relative}",
        "relative": relative,
        "markdown": f"![login screen]({relative})",
        "source": "shots/login.png",
    }
    assert (root / relative).read_bytes() == PNG
    text = outcome.content[0].text
    assert "Image Saved" in text
    assert f"Markdown ref:** ![login screen]({relative})" in text


async def test_save_image_resolves_a_relative_path_against_the_served_cwd(call, root, image):
    outcome = await call("dokoro_save_image", source="shots/login.png", name="login.png", subfolder="screens/auth")

    assert outcome.structured_content["relative"] == "assets/images/screens/auth/login.png"
    assert outcome.structured_content["markdown"] == "![image](assets/images/screens/auth/login.png)"
    assert (root / "assets" / "images" / "screens" / "auth" / "login.png").read_bytes() == PNG


async def test_save_image_copies_a_relative_path_without_an_extension(call, root, cwd):
    (cwd / "screenshot").write_bytes(PNG)  # also a plausible base64 string: the file must win

    outcome = await call("dokoro_save_image", source="screenshot", name="shot.png")

    assert outcome.structured_content["source"] == "screenshot"
    assert (root / "assets" / "images" / "shot.png").read_bytes() == PNG


async def test_save_image_decodes_base64(call, root):
    outcome = await call("dokoro_save_image", source=base64.b64encode(PNG).decode())

    relative = f"assets/images/image-{MILLIS}.png"
    assert outcome.structured_content["relative"] == relative
    assert outcome.structured_content["source"] == "base64 data"
    assert (root / relative).read_bytes() == PNG


async def test_a_large_base64_image_is_decoded_not_mistaken_for_a_long_path(call, root):
    large = PNG + bytes(4096)  # encodes to one 5,000-character run: far past any file-name limit

    outcome = await call("dokoro_save_image", source=base64.b64encode(large).decode(), name="big.png")

    assert outcome.structured_content["source"] == "base64 data"
    assert (root / "assets" / "images" / "big.png").read_bytes() == large


async def test_save_image_takes_the_extension_from_a_data_url(call, root):
    source = "data:image/jpeg;base64," + base64.b64encode(PNG).decode()

    outcome = await call("dokoro_save_image", source=source, subfolder="ui")

    relative = f"assets/images/ui/image-{MILLIS}.jpg"
    assert outcome.structured_content["relative"] == relative
    assert (root / relative).read_bytes() == PNG


async def test_save_image_logs_to_a_claimed_workspace(call, image, read_current):
    await call("dokoro_workspace_claim", task="fix login")

    await call("dokoro_save_image", source=str(image), name="login.png", description="login screen")

    assert "IMAGE SAVED: assets/images/login.png\n   ![login screen](assets/images/login.png)" in read_current()[1]


@pytest.mark.parametrize(
    ("source", "hint"),
    [
        ("data:image/png;base64,@@not-base64@@", "does not decode"),
        ("QUJDREVGR0", "does not decode"),  # base64 alphabet, impossible length
        ("data:image/png;base64,", "empty image"),
    ],
)
async def test_save_image_rejects_invalid_base64_and_writes_nothing(fail, root, snapshot, source, hint):
    before = snapshot()

    message = await fail("dokoro_save_image", source=source)

    assert hint in message
    assert snapshot() == before
    assert not (root / "assets").exists()


async def test_save_image_from_a_missing_file_says_what_sources_are_accepted(fail, root, cwd):
    message = await fail("dokoro_save_image", source="shots/missing.png")

    assert "Source not found: shots/missing.png" in message
    assert "base64" in message
    assert not (root / "assets").exists()


@pytest.mark.parametrize(
    ("arguments", "hint"),
    [
        ({"name": "../evil.png"}, "name must be a plain file name"),
        ({"name": ".."}, "name must be a plain file name"),
        ({"name": "sub/evil.png"}, "name must be a plain file name"),
        ({"subfolder": "../../outside"}, "subfolder must be a relative folder inside assets/images"),
        ({"subfolder": "ok/../../outside"}, "subfolder must be a relative folder inside assets/images"),
        ({"source": "   "}, "source must be a file path"),
    ],
)
async def test_save_image_refuses_paths_that_leave_the_assets_folder(fail, tmp_path, root, image, arguments, hint):
    arguments = {"source": str(image)} | arguments

    message = await fail("dokoro_save_image", **arguments)

    assert hint in message
    assert not (root / "assets").exists()
    assert not (tmp_path / "outside").exists()
    assert not (root / "evil.png").exists()


async def test_a_traversing_name_is_refused_for_base64_too(fail, root):
    message = await fail("dokoro_save_image", source=base64.b64encode(PNG).decode(), name="../../evil.png")

    assert "plain file name" in message
    assert not (root / "assets").exists()


# ---------------------------------------------------------------------------------------------- files


@pytest.mark.parametrize("category", ["documents", "code", "data", "other"])
async def test_save_file_copies_into_its_category_folder(call, root, cwd, category):
    (cwd / "notes.txt").write_text("hello")

    outcome = await call("dokoro_save_file", source="notes.txt", category=category, description="meeting notes")

    relative = f"assets/{category}/notes.txt"
    assert outcome.structured_content == {
        "path": f"dokoro/{relative}",
        "relative": relative,
        "markdown": f"[notes.txt]({relative})",
        "source": "notes.txt",
    }
    assert (root / relative).read_text() == "hello"
    assert "File Saved" in outcome.content[0].text


async def test_save_file_defaults_to_other_and_can_rename(call, root, cwd, read_current):
    await call("dokoro_workspace_claim", task="fix login")
    (cwd / "data.csv").write_text("a,b\n")

    outcome = await call("dokoro_save_file", source=str(cwd / "data.csv"), name="export.csv", description="export")

    assert outcome.structured_content["relative"] == "assets/other/export.csv"
    assert (root / "assets" / "other" / "export.csv").read_text() == "a,b\n"
    assert "FILE SAVED: assets/other/export.csv — export" in read_current()[1]


@pytest.mark.parametrize(
    ("arguments", "hint"),
    [
        ({"source": "notes.txt", "category": "images"}, "'documents', 'code', 'data' or 'other'"),
        ({"source": "missing.txt"}, "Source not found"),
        ({"source": "notes.txt", "name": "../../evil.txt"}, "name must be a plain file name"),
        ({"source": "notes.txt", "category": "code", "name": "a/b.txt"}, "name must be a plain file name"),
        ({"source": ""}, "source must be a file path"),
    ],
)
async def test_save_file_rejects_bad_arguments_and_writes_nothing(fail, root, cwd, snapshot, arguments, hint):
    (cwd / "notes.txt").write_text("hello")
    before = snapshot()

    message = await fail("dokoro_save_file", **arguments)

    assert hint in message
    assert snapshot() == before
    assert not (root / "assets").exists()


async def test_save_file_says_a_missing_source_must_be_a_file_not_base64(fail):
    message = await fail("dokoro_save_file", source="missing.txt")

    assert "Pass an existing file path" in message
    assert "base64" not in message


# ---------------------------------------------------------------------------------------------- list


async def test_list_assets_groups_saved_files_by_category(call, cwd, image):
    (cwd / "notes.txt").write_text("hello")
    await call("dokoro_save_image", source=str(image), name="login.png")
    await call("dokoro_save_image", source=str(image), name="b.png", subfolder="screens")
    await call("dokoro_save_file", source="notes.txt", category="documents")

    outcome = await call("dokoro_list_assets")

    assert outcome.structured_content == {
        "assets": {
            "images": ["assets/images/login.png", "assets/images/screens"],
            "documents": ["assets/documents/notes.txt"],
        }
    }
    text = outcome.content[0].text
    assert text.startswith("## Dokoro Assets")
    assert "### Images (2)\n- `assets/images/login.png`\n- `assets/images/screens`" in text
    assert "### Documents (1)\n- `assets/documents/notes.txt`" in text


async def test_list_assets_of_one_category(call, cwd, image):
    (cwd / "notes.txt").write_text("hello")
    await call("dokoro_save_image", source=str(image), name="login.png")
    await call("dokoro_save_file", source="notes.txt", category="code")

    outcome = await call("dokoro_list_assets", category="code")

    assert outcome.structured_content == {"assets": {"code": ["assets/code/notes.txt"]}}


async def test_list_assets_with_nothing_saved_is_an_info_card(call):
    outcome = await call("dokoro_list_assets")

    assert outcome.structured_content == {"assets": {}}
    assert "No Assets" in outcome.content[0].text


async def test_list_assets_rejects_an_unknown_category(fail):
    message = await fail("dokoro_list_assets", category="videos")

    assert "'images', 'documents', 'code', 'data', 'other' or 'all'" in message


async def test_a_missing_file_name_that_happens_to_be_base64_is_not_saved_as_an_image(fail, root):
    message = await fail("dokoro_save_image", source="diagram1")

    assert "neither an existing file" in message
    assert not (root / "assets" / "images").exists() or not any((root / "assets" / "images").iterdir())


async def test_saving_a_different_file_under_an_existing_name_keeps_both(call, root, cwd):
    (cwd / "a.txt").write_text("first", encoding="utf-8")
    (cwd / "b.txt").write_text("second", encoding="utf-8")

    await call("dokoro_save_file", source="a.txt", name="notes.txt")
    outcome = await call("dokoro_save_file", source="b.txt", name="notes.txt")

    assert outcome.structured_content["relative"] == "assets/other/notes-2.txt"
    assert (root / "assets" / "other" / "notes.txt").read_text(encoding="utf-8") == "first"
