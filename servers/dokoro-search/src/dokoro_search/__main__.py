"""``python -m dokoro_search``: serve the search tools over stdio."""

from dokoro_search.server import main

if __name__ == "__main__":
    main()
