#!/usr/bin/env python3
"""oci.py -- build and check leaderd's OCI image without a docker engine.

    oci.py build LAYOUT TARBALL --platform ARCH=ROOTFS... [--tag T]
    oci.py build ROOTFS LAYOUT TARBALL [--tag T] [--arch A]
        Write an OCI image layout (the image-spec's "oci-layout",
        index.json and blobs/sha256/) to the directory LAYOUT, and the
        same layout as an uncompressed tar, TARBALL (what `skopeo copy
        --all oci-archive:TARBALL ...` and `podman load -i TARBALL`
        read).  Each platform's image has one layer: its ROOTFS
        (deploy/image/mkrootfs.sh's output) as a gzip'd tar with
        deterministic headers (sorted, mtime 0, uid/gid 0, no user or
        group names), so the same ROOTFS gives the same digests.  Its
        config runs /leaderd as 65532:65532 (no shell: the entrypoint is
        the exec form), with "/" on PATH for `leaderd status` and the
        other control commands under `kubectl exec`.  The layout holds one image index per entry of
        VARIANTS, each naming one manifest per platform, all on that
        platform's one layer: tag T runs /leaderd, and tag T-PEER runs
        /leaderd --compat=PEER, the image a user of that peer sidecar
        puts in place of the peer's (docs/migrating.md).

    oci.py unpack LAYOUT_OR_TARBALL DEST [--tag T] [--arch A]
        Check the layout (oci-layout version, media types, every blob's
        size and sha256 digest, the layers' diff_ids) and extract the
        image's file system to DEST/rootfs (the image tagged T, else the
        first; for platform A, else the first); print its config as
        JSON.
        Refuses any layer entry that would land outside DEST/rootfs, and
        any entry type other than a directory or a regular file.

The same rules are imported by test/deploy/test_image.py.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile

MT_INDEX = "application/vnd.oci.image.index.v1+json"
MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
USER = "65532:65532"
# The Dockerfile's ENV: the runtimes' default PATH and "/", where the
# binary is, so that `kubectl exec POD -c leaderd -- leaderd status`
# finds it.
ENV = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/"]
# (tag suffix, entrypoint): the image, and one per peer sidecar leaderd
# stands in for (lib/config/compat.c).
VARIANTS = [("", ["/leaderd"])] + [
    ("-" + peer, ["/leaderd", "--compat=" + peer])
    for peer in ("classic", "nais", "vapor", "await")]


class ImageError(Exception):
    """A layout or image that does not follow the spec, or ours."""


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _info(name, mode, size=0, isdir=False):
    ti = tarfile.TarInfo(name)
    ti.type = tarfile.DIRTYPE if isdir else tarfile.REGTYPE
    ti.mode = mode
    ti.size = size
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = ""
    ti.mtime = 0
    return ti


def deterministic_tar(entries):
    """A tar (bytes) of entries: (name, mode, data or None for a dir),
    written in sorted name order with fixed headers."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) \
            as tar:
        for name, mode, data in sorted(entries, key=lambda e: e[0]):
            if data is None:
                tar.addfile(_info(name + "/", mode, isdir=True))
            else:
                tar.addfile(_info(name, mode, len(data)), io.BytesIO(data))
    return buf.getvalue()


def rootfs_entries(rootfs):
    """(name, mode, data) for every directory and regular file under
    rootfs, names relative to it; anything else is an error."""
    out = []
    for dirpath, dirnames, filenames in os.walk(rootfs):
        dirnames.sort()
        for d in dirnames:
            p = os.path.join(dirpath, d)
            if os.path.islink(p):
                raise ImageError("%s: a symlink; the file set has none" % p)
            out.append((os.path.relpath(p, rootfs),
                        os.stat(p).st_mode & 0o7777, None))
        for f in sorted(filenames):
            p = os.path.join(dirpath, f)
            st = os.lstat(p)
            if not os.path.isfile(p) or os.path.islink(p):
                raise ImageError("%s: not a regular file" % p)
            with open(p, "rb") as fh:
                out.append((os.path.relpath(p, rootfs), st.st_mode & 0o7777,
                            fh.read()))
    return out


def _json_blob(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def build(platforms, layout, tarball, tag, version):
    """Write the layout directory and its tarball from platforms, a list
    of (arch, rootfs); return a summary (the first platform's layer)."""
    blobs, descs, layers = [], [], {}
    for arch, rootfs in platforms:
        layer_tar = deterministic_tar(rootfs_entries(rootfs))
        layers[arch] = (layer_tar, gzip.compress(layer_tar,
                                                 compresslevel=9, mtime=0))
        blobs.append(layers[arch][1])
    for suffix, entrypoint in VARIANTS:
        per_arch = []
        for arch, _ in platforms:
            layer_tar, layer = layers[arch]
            manifest_b, config_b = _image(arch, entrypoint, version,
                                          layer_tar, layer)
            blobs += [config_b, manifest_b]
            per_arch.append({
                "mediaType": MT_MANIFEST, "digest": sha256(manifest_b),
                "size": len(manifest_b),
                "platform": {"architecture": arch, "os": "linux"}})
        index_b = _json_blob({"schemaVersion": 2, "mediaType": MT_INDEX,
                              "manifests": per_arch})
        blobs.append(index_b)
        descs.append({
            "mediaType": MT_INDEX, "digest": sha256(index_b),
            "size": len(index_b),
            "annotations": {"org.opencontainers.image.ref.name":
                            tag + suffix},
        })
    _write(layout, tarball, blobs, descs)
    return {"index": descs[0]["digest"],
            "layers": {arch: (sha256(layers[arch][1]), len(layers[arch][1]),
                              len(layers[arch][0]))
                       for arch, _ in platforms},
            "tarball_size": os.path.getsize(tarball)}


def _image(arch, entrypoint, version, layer_tar, layer):
    """(manifest, config) bytes of one platform's image."""
    config = {
        "created": "1970-01-01T00:00:00Z",
        "architecture": arch,
        "os": "linux",
        "config": {
            "User": USER,
            "Env": ENV,
            "Entrypoint": entrypoint,
            "WorkingDir": "/",
            "Labels": {
                "org.opencontainers.image.title": "leaderd",
                "org.opencontainers.image.version": version,
            },
        },
        "rootfs": {"type": "layers", "diff_ids": [sha256(layer_tar)]},
        "history": [{"created": "1970-01-01T00:00:00Z",
                     "created_by": "deploy/image/mkrootfs.sh + "
                                   "deploy/image/oci.py"}],
    }
    config_b = _json_blob(config)
    manifest = {
        "schemaVersion": 2,
        "mediaType": MT_MANIFEST,
        "config": {"mediaType": MT_CONFIG, "digest": sha256(config_b),
                   "size": len(config_b)},
        "layers": [{"mediaType": MT_LAYER, "digest": sha256(layer),
                    "size": len(layer)}],
    }
    return _json_blob(manifest), config_b


def _write(layout, tarball, blobs, descs):
    """The layout directory, written afresh, and its tarball."""
    index = {"schemaVersion": 2, "mediaType": MT_INDEX, "manifests": descs}
    index_b = json.dumps(index, sort_keys=True, indent=2).encode() + b"\n"
    files = [("oci-layout", b'{"imageLayoutVersion":"1.0.0"}\n'),
             ("index.json", index_b)]
    for blob in blobs:
        files.append(("blobs/sha256/" + sha256(blob)[7:], blob))
    # The directory, written afresh.
    if os.path.isdir(layout):
        for dirpath, dirnames, filenames in os.walk(layout, topdown=False):
            for f in filenames:
                os.unlink(os.path.join(dirpath, f))
            for d in dirnames:
                os.rmdir(os.path.join(dirpath, d))
    for name, data in files:
        p = os.path.join(layout, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
    entries = [(n, 0o644, d) for n, d in files] + \
        [("blobs", 0o755, None), ("blobs/sha256", 0o755, None)]
    tmp = tarball + ".tmp"
    with open(tmp, "wb") as f:
        f.write(deterministic_tar(entries))
    os.replace(tmp, tarball)


# --- reading -------------------------------------------------------------

class Layout:
    """Blobs and top-level files of a layout, from a directory or a
    tarball."""

    def __init__(self, path):
        self.files = {}
        if os.path.isdir(path):
            for dirpath, _, filenames in os.walk(path):
                for f in filenames:
                    p = os.path.join(dirpath, f)
                    with open(p, "rb") as fh:
                        self.files[os.path.relpath(p, path)] = fh.read()
        else:
            with tarfile.open(path) as tar:
                for m in tar.getmembers():
                    if m.isfile():
                        self.files[os.path.normpath(m.name)] = \
                            tar.extractfile(m).read()
                    elif not m.isdir():
                        raise ImageError("%s: %s in the layout tarball is "
                                         "not a file or directory"
                                         % (path, m.name))

    def json(self, name):
        if name not in self.files:
            raise ImageError("the layout has no %s" % name)
        try:
            return json.loads(self.files[name])
        except ValueError as e:
            raise ImageError("%s: not JSON: %s" % (name, e))

    def blob(self, desc, media_type):
        if desc.get("mediaType") != media_type:
            raise ImageError("descriptor %s: media type %r, expected %r"
                             % (desc.get("digest"), desc.get("mediaType"),
                                media_type))
        digest = desc.get("digest", "")
        if not digest.startswith("sha256:") or len(digest) != 71:
            raise ImageError("descriptor digest %r is not sha256" % digest)
        name = "blobs/sha256/" + digest[7:]
        if name not in self.files:
            raise ImageError("blob %s is missing" % digest)
        data = self.files[name]
        if len(data) != desc.get("size"):
            raise ImageError("blob %s: %d bytes, the descriptor says %s"
                             % (digest, len(data), desc.get("size")))
        if sha256(data) != digest:
            raise ImageError("blob %s: its content hashes to %s"
                             % (digest, sha256(data)))
        return data


def platforms(path, tag=None):
    """The architectures of the image tagged tag (None: the first)."""
    lay = Layout(path)
    for desc in lay.json("index.json").get("manifests") or []:
        name = (desc.get("annotations") or {}).get(
            "org.opencontainers.image.ref.name")
        if tag is None or name == tag:
            if desc.get("mediaType") == MT_MANIFEST:
                return [desc.get("platform", {}).get("architecture")]
            idx = json.loads(lay.blob(desc, MT_INDEX))
            return [d.get("platform", {}).get("architecture")
                    for d in idx.get("manifests", [])]
    raise ImageError("index.json: no image tagged %r" % tag)


def read_image(path, tag=None, arch=None):
    """(config, [layer tar bytes, uncompressed]) of the image tagged tag
    (None: the first) for architecture arch (None: the first) in the
    layout at path, every digest, size and diff_id checked, every
    platform's, and every file of the layout referenced.  A tag names an
    image index (one manifest per platform) or a manifest."""
    lay = Layout(path)
    if lay.json("oci-layout").get("imageLayoutVersion") != "1.0.0":
        raise ImageError("oci-layout: imageLayoutVersion is not 1.0.0")
    index = lay.json("index.json")
    if index.get("schemaVersion") != 2:
        raise ImageError("index.json: schemaVersion is not 2")
    mans = index.get("manifests") or []
    if not mans:
        raise ImageError("index.json: no manifests")
    used = {"oci-layout", "index.json"}
    found = None
    flat = []
    for desc in mans:
        name = (desc.get("annotations") or {}).get(
            "org.opencontainers.image.ref.name")
        if desc.get("mediaType") == MT_INDEX:
            idx = json.loads(lay.blob(desc, MT_INDEX))
            if idx.get("schemaVersion") != 2 or not idx.get("manifests"):
                raise ImageError("image index %s: no manifests"
                                 % desc.get("digest"))
            used.add("blobs/sha256/" + desc["digest"][7:])
            flat += [(name, d) for d in idx["manifests"]]
        else:
            flat.append((name, desc))
    for name, desc in flat:
        manifest = json.loads(lay.blob(desc, MT_MANIFEST))
        if manifest.get("schemaVersion") != 2:
            raise ImageError("manifest: schemaVersion is not 2")
        config = json.loads(lay.blob(manifest["config"], MT_CONFIG))
        layers = [gzip.decompress(lay.blob(d, MT_LAYER))
                  for d in manifest.get("layers", [])]
        diff_ids = config.get("rootfs", {}).get("diff_ids", [])
        if diff_ids != [sha256(t) for t in layers]:
            raise ImageError("config: rootfs.diff_ids do not match the "
                             "layers")
        used |= {"blobs/sha256/" + d["digest"][7:] for d in
                 [desc, manifest["config"]] + manifest.get("layers", [])}
        plat = desc.get("platform") or {}
        if config.get("architecture") != plat.get(
                "architecture", config.get("architecture")):
            raise ImageError("manifest %s: platform %s, config %s"
                             % (desc.get("digest"), plat,
                                config.get("architecture")))
        if found is None and (tag is None or name == tag) and \
                (arch is None or config.get("architecture") == arch):
            found = config, layers
    if found is None:
        raise ImageError("index.json: no image tagged %r%s"
                         % (tag, " for %s" % arch if arch else ""))
    extra = sorted(set(lay.files) - used)
    if extra:
        raise ImageError("the layout holds unreferenced files: %s" % extra)
    return found


def layer_members(layer):
    """The layer's entries as {name: (type, mode, uid, gid, mtime)}."""
    out = {}
    with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
        for m in tar.getmembers():
            out[os.path.normpath(m.name)] = (
                "dir" if m.isdir() else "file" if m.isfile() else "other",
                m.mode, m.uid, m.gid, m.mtime)
    return out


def extract(layers, dest):
    """Extract the layers in order into dest (created)."""
    os.makedirs(dest, exist_ok=True)
    top = os.path.realpath(dest)
    for layer in layers:
        with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
            for m in tar.getmembers():
                name = os.path.normpath(m.name)
                target = os.path.realpath(os.path.join(top, name))
                if name.startswith(("/", "..")) or \
                        not target.startswith(top + os.sep):
                    raise ImageError("layer entry %r escapes the rootfs"
                                     % m.name)
                if m.isdir():
                    os.makedirs(target, exist_ok=True)
                    os.chmod(target, m.mode)
                elif m.isfile():
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with open(target, "wb") as f:
                        f.write(tar.extractfile(m).read())
                    os.chmod(target, m.mode)
                else:
                    raise ImageError("layer entry %r: type %r is not a "
                                     "file or directory" % (m.name, m.type))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("paths", nargs="+",
                   help="[ROOTFS] LAYOUT TARBALL")
    b.add_argument("--tag", default="latest")
    b.add_argument("--version", default="")
    b.add_argument("--arch", default="amd64")
    b.add_argument("--platform", action="append", default=[],
                   metavar="ARCH=ROOTFS")
    u = sub.add_parser("unpack")
    u.add_argument("image")
    u.add_argument("dest")
    u.add_argument("--tag", default=None)
    u.add_argument("--arch", default=None)
    args = ap.parse_args()
    try:
        if args.cmd == "build":
            if args.platform:
                if len(args.paths) != 2:
                    ap.error("build --platform ...: LAYOUT TARBALL")
                plats = [tuple(p.split("=", 1)) for p in args.platform]
                layout, tarball = args.paths
            else:
                if len(args.paths) != 3:
                    ap.error("build: ROOTFS LAYOUT TARBALL")
                plats = [(args.arch, args.paths[0])]
                layout, tarball = args.paths[1:]
            s = build(plats, layout, tarball, args.tag,
                      args.version or args.tag)
            for arch, (digest, size, tar_size) in s["layers"].items():
                print("oci.py: %s (tag %s) %s: layer %s, %d bytes "
                      "compressed (%.2f MB), file set %d bytes"
                      % (layout, args.tag, arch, digest[:19], size,
                         size / 1e6, tar_size))
            print("oci.py: tarball %s, %d bytes" % (tarball,
                                                     s["tarball_size"]))
        else:
            config, layers = read_image(args.image, args.tag, args.arch)
            extract(layers, os.path.join(args.dest, "rootfs"))
            json.dump(config, sys.stdout, indent=2, sort_keys=True)
            print()
    except (ImageError, OSError, tarfile.TarError) as e:
        print("oci.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
