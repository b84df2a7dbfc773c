"""Walks of a model's graph and every body in it: how many nodes of an op, and which nodes nothing
reads. Imports no pytest."""


def count(model, op):
    """`op` nodes in a model's graph and every subgraph."""
    def walk(graph):
        n = 0
        for node in graph.node:
            n += node.op_type == op
            for a in node.attribute:
                n += sum(walk(g) for g in ([a.g] if a.HasField("g") else []) + list(a.graphs))
        return n
    return walk(model.graph)


def unread(model):
    """Nodes of a model's graph or of a body that nothing reads (no output read in that graph,
    its bodies or its outputs): static mode removes them (crates/emit-static/src/dead.rs), as
    ONNX Runtime 1.17.3 and 1.18.1 gave such a tensor a buffer overlapping live ones."""
    def bodies(node):
        for a in node.attribute:
            yield from ([a.g] if a.HasField("g") else []) + list(a.graphs)

    def read_in(graph):
        names = {o.name for o in graph.output}
        for node in graph.node:
            names.update(node.input)
            for body in bodies(node):
                names |= read_in(body)
        return names

    def walk(graph):
        read = read_in(graph)
        found = [(node.op_type, node.output[0]) for node in graph.node
                 if node.output and not any(o and o in read for o in node.output)]
        for node in graph.node:
            for body in bodies(node):
                found += walk(body)
        return found
    return walk(model.graph)
