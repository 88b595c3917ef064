"""Embedders (door: :mod:`.handle`): the protocol and the handle that picks one lazily; the bundled
ONNX model (:mod:`.onnx`), the static model (:mod:`.static`), Ollama (:mod:`.ollama` over
:mod:`.ollama_client`) and the hashing floor (:mod:`.hashing`).
"""
