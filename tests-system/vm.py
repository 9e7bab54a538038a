#!/usr/bin/env python3
"""Boots the system stage's Debian 12 image under QEMU and drives it.

    tests-system/vm.py IMAGE_DIR [--sway] [--badconfig] [--keep]

IMAGE_DIR is what tests-system/build-image.sh wrote (root.img, vmlinuz, initrd.img). The
image itself is never changed: each boot writes to a throwaway qcow2 overlay on top of it.
The guest has:
  - an xHCI USB controller with a USB keyboard (kbd1) and a USB mouse; more keyboards can
    be plugged and unplugged while it runs (QMP device_add / device_del);
  - the serial console (ttyS0), where root is logged in: `socat -,raw,echo=0
    UNIX-CONNECT:RUNDIR/serial.sock` gives you its shell; everything it prints is also in
    RUNDIR/console.log;
  - a QMP socket (RUNDIR/qmp.sock): keys are typed as a person would, through the USB
    keyboard (input-send-event), so they travel the real kernel input path;
  - a control channel (virtio-serial, RUNDIR/ctl.sock) on which the guest's kbdtest-ctl
    runs shell commands as root and returns their output (VM.sh below);
  - with --sway, a virtio-gpu display: alice's tty1 runs sway (WLR_RENDERER=pixman).
Run from the command line, it boots, prints where everything is and waits until Ctrl+C
(or, without a terminal, 10 minutes); qemu is killed by its PID on the way out. The test
scenarios import it (tests-system/scenarios.py).
"""
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

# QEMU's names for the keys the scenarios type (qcodes).
QCODES = {c: c for c in "abcdefghijklmnopqrstuvwxyz0123456789"}
QCODES.update({"\n": "ret", " ": "spc", "-": "minus", ".": "dot", "/": "slash"})
MODS = {"Ctrl": "ctrl", "Alt": "alt", "Shift": "shift", "Super": "meta_l"}


class VMError(Exception):
    pass


class VM:
    def __init__(self, image_dir, sway=False, badconfig=False, run_dir=None, log=None):
        self.image_dir = os.path.abspath(image_dir)
        self.sway, self.badconfig = sway, badconfig
        self.dir = run_dir or tempfile.mkdtemp(prefix="boot.", dir=os.environ.get("KBD_SYSTEM_RUNS") or None)
        self.log = log or (lambda m: print("[vm] " + m, file=sys.stderr, flush=True))
        self.proc = None
        self.pid = None
        self.qmp = None
        self.ctl = None
        self.ctl_buf = b""
        self.next_id = 1
        self.qmp_lock = threading.Lock()
        self.events = []
        self.boot_seconds = None
        self.keyboards = {"kbd1"}

    # ---- start and stop
    def start(self, timeout=240):
        for f in ("root.img", "vmlinuz", "initrd.img"):
            if not os.path.exists(os.path.join(self.image_dir, f)):
                raise VMError("%s has no %s: run tests-system/build-image.sh first" % (self.image_dir, f))
        overlay = os.path.join(self.dir, "overlay.qcow2")
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b",
                        os.path.join(self.image_dir, "root.img"), overlay], check=True)
        append = "root=/dev/vda rw console=ttyS0,115200 loglevel=4 systemd.show_status=0"
        if self.sway:
            append += " kbdtest.sway"
        if self.badconfig:
            append += " kbdtest.badconfig"
        q = ["qemu-system-x86_64", "-name", "kbd-system", "-nodefaults", "-no-user-config",
             "-machine", "q35,i8042=off", "-accel", "tcg", "-cpu", "max", "-smp", "2", "-m", "2048",
             "-kernel", os.path.join(self.image_dir, "vmlinuz"),
             "-initrd", os.path.join(self.image_dir, "initrd.img"), "-append", append,
             "-drive", "file=%s,if=virtio,format=qcow2,cache=unsafe" % overlay,
             "-chardev", "socket,id=ser,path=%s,server=on,wait=off,logfile=%s" % (
                 os.path.join(self.dir, "serial.sock"), os.path.join(self.dir, "console.log")),
             "-serial", "chardev:ser",
             "-qmp", "unix:%s,server=on,wait=off" % os.path.join(self.dir, "qmp.sock"),
             "-device", "virtio-serial-pci,id=vser",
             "-chardev", "socket,id=ctl,path=%s,server=on,wait=off" % os.path.join(self.dir, "ctl.sock"),
             "-device", "virtserialport,bus=vser.0,chardev=ctl,name=kbdtest.ctl",
             "-device", "qemu-xhci,id=xhci,p2=8,p3=8",
             "-device", "usb-kbd,id=kbd1,bus=xhci.0",
             "-device", "usb-mouse,id=mouse1,bus=xhci.0",
             # A second keyboard is plugged while the guest runs; its events are aimed at
             # it through a display console of its own (a small bochs-display).
             "-device", "bochs-display,id=con-kbd2,vgamem=4M,romfile=",
             "-pidfile", os.path.join(self.dir, "qemu.pid")]
        if self.sway:
            q += ["-device", "virtio-gpu-pci,id=gpu", "-display", "none"]
        else:
            q += ["-display", "none"]
        self.log("qemu: " + " ".join(q))
        t0 = time.monotonic()
        self.proc = subprocess.Popen(q, stdin=subprocess.DEVNULL, stdout=open(os.path.join(self.dir, "qemu.log"), "wb"),
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.pid = self.proc.pid
        with open(os.path.join(self.dir, "qemu.pid.host"), "w") as f:
            f.write("%d\n" % self.pid)
        self._qmp_connect(t0 + 30)
        self._ctl_connect(t0 + 30)
        # The guest is up when its control agent answers.
        deadline = t0 + timeout
        while True:
            if self.proc.poll() is not None:
                raise VMError("qemu exited (%s) while booting; see %s" % (self.proc.returncode, self.dir))
            try:
                r = self.sh("true", timeout=3)
                if r[0] == 0:
                    break
            except VMError:
                pass
            if time.monotonic() > deadline:
                raise VMError("the guest did not answer on its control channel within %d s; console: %s"
                              % (timeout, os.path.join(self.dir, "console.log")))
        # Booted: systemd says so (running, or degraded when a unit failed).
        rc, state = self.sh("systemctl is-system-running --wait", timeout=max(5, deadline - time.monotonic()))
        self.log("systemctl is-system-running: %s" % state.strip())
        self.boot_seconds = round(time.monotonic() - t0, 1)
        self.log("booted after %.1f s" % self.boot_seconds)
        return self

    def stop(self):
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except Exception:
                pass
            self.pid = None
        for s in (self.qmp, self.ctl):
            try:
                s and s.close()
            except OSError:
                pass

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    # ---- QMP
    def _connect(self, path, deadline):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        while True:
            try:
                s.connect(path)
                return s
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise VMError("qemu's socket %s never appeared; see %s/qemu.log" % (path, self.dir))
                time.sleep(0.05)

    def _qmp_connect(self, deadline):
        self.qmp = self._connect(os.path.join(self.dir, "qmp.sock"), deadline)
        self.qmp_f = self.qmp.makefile("rb")
        json.loads(self.qmp_f.readline())
        self.qmp_cmd("qmp_capabilities")

    def qmp_cmd(self, name, args=None, check=True):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        with self.qmp_lock:
            self.qmp.sendall(json.dumps(msg).encode() + b"\n")
            while True:
                line = self.qmp_f.readline()
                if not line:
                    raise VMError("QMP %s: connection closed (qemu exited?)" % name)
                r = json.loads(line)
                if "event" in r:
                    self.events.append(r)
                    continue
                break
        if "error" in r and check:
            raise VMError("QMP %s failed: %s" % (name, r["error"].get("desc")))
        return r.get("return")

    def wait_qmp_event(self, name, device, timeout=15):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for e in self.events:
                if e["event"] == name and e.get("data", {}).get("device") == device:
                    self.events.remove(e)
                    return e
            # Reading a reply also collects the events sent before it.
            self.qmp_cmd("query-status")
            time.sleep(0.2)
        return None

    # ---- keys (through the USB keyboard, as a person types)
    def key(self, qcode, down, kbd=None):
        args = {"events": [{"type": "key", "data": {"down": down, "key": {"type": "qcode", "data": qcode}}}]}
        if kbd and kbd != "kbd1":
            args["device"] = "con-" + kbd
        self.qmp_cmd("input-send-event", args)
        # usb-kbd queues 16 events and sends one report per 8 ms poll: no faster than that.
        time.sleep(0.03)

    def chord(self, text, kbd=None, hold=0.1):
        """chord("Ctrl+Alt+M"): presses the modifiers, the key, releases all."""
        parts = text.split("+")
        qs = [MODS.get(p, QCODES.get(p.lower(), p.lower())) for p in parts]
        for q in qs:
            self.key(q, True, kbd)
        time.sleep(hold)
        for q in reversed(qs):
            self.key(q, False, kbd)

    def type(self, text, kbd=None):
        for ch in text:
            q = QCODES[ch]
            self.key(q, True, kbd)
            self.key(q, False, kbd)

    def plug(self, name):
        self.qmp_cmd("device_add", {"driver": "usb-kbd", "id": name, "bus": "xhci.0", "display": "con-" + name})
        self.keyboards.add(name)

    def unplug(self, name):
        self.qmp_cmd("device_del", {"id": name})
        if not self.wait_qmp_event("DEVICE_DELETED", name):
            raise VMError("device_del %s: no DEVICE_DELETED from qemu" % name)
        self.keyboards.discard(name)

    def unplug_usb_keyboard(self, name):
        """device_del of a keyboard given on qemu's command line (kbd1)."""
        self.unplug(name)

    def plug_again(self, name):
        self.qmp_cmd("device_add", {"driver": "usb-kbd", "id": name, "bus": "xhci.0"})
        self.keyboards.add(name)

    def screendump(self, path):
        # The virtio-gpu's picture (console 0 may be the small display kbd2's keys go to).
        self.qmp_cmd("screendump", {"filename": path, "device": "gpu"})
        return read_ppm(path)

    # ---- the control channel
    def _ctl_connect(self, deadline):
        self.ctl = self._connect(os.path.join(self.dir, "ctl.sock"), deadline)

    def sh(self, script, timeout=130):
        """Runs a bash script in the guest as root: (exit status, output)."""
        cid = self.next_id
        self.next_id += 1
        self.ctl.sendall(b"%d %s\n" % (cid, base64.b64encode(script.encode())))
        end = time.monotonic() + timeout
        while True:
            while b"\n" in self.ctl_buf:
                line, self.ctl_buf = self.ctl_buf.split(b"\n", 1)
                parts = line.decode(errors="replace").split(" ", 2)
                if len(parts) >= 2 and parts[0] == str(cid):
                    out = base64.b64decode(parts[2]).decode(errors="replace") if len(parts) > 2 else ""
                    return int(parts[1]), out
            left = end - time.monotonic()
            if left <= 0:
                raise VMError("guest command timed out after %d s: %s" % (timeout, script[:80]))
            if self.proc.poll() is not None:
                raise VMError("qemu exited")
            self.ctl.settimeout(min(left, 1.0))
            try:
                chunk = self.ctl.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                raise VMError("control channel closed")
            self.ctl_buf += chunk

    def out(self, script, timeout=130):
        """The output of a guest command that must succeed."""
        rc, o = self.sh(script, timeout)
        if rc != 0:
            raise VMError("guest command failed (exit %d): %s\n%s" % (rc, script[:200], o[-2000:]))
        return o

    def wait_until(self, script, timeout=60, every=1.0):
        """Runs a guest command until it succeeds; True if it did within timeout."""
        end = time.monotonic() + timeout
        while True:
            rc, _ = self.sh(script)
            if rc == 0:
                return True
            if time.monotonic() > end:
                return False
            time.sleep(every)


def read_ppm(path):
    """A binary PPM (P6) as (width, height, bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    fields = []
    i = 0
    while len(fields) < 4:
        while data[i:i + 1].isspace():
            i += 1
        if data[i:i + 1] == b"#":
            while data[i:i + 1] != b"\n":
                i += 1
            continue
        j = i
        while not data[j:j + 1].isspace():
            j += 1
        fields.append(data[i:j])
        i = j
    if fields[0] != b"P6":
        raise VMError("%s: not a binary PPM" % path)
    w, h = int(fields[1]), int(fields[2])
    return w, h, data[i + 1:i + 1 + w * h * 3]


def region_stats(img, x0, y0, x1, y1):
    """Mean colour and the share of pixels that differ from the region's most common one."""
    w, h, px = img
    counts = {}
    n = 0
    for y in range(max(0, y0), min(h, y1), 2):
        row = px[(y * w) * 3:(y * w + w) * 3]
        for x in range(max(0, x0), min(w, x1), 2):
            c = row[x * 3:x * 3 + 3]
            counts[c] = counts.get(c, 0) + 1
            n += 1
    if not n:
        return None, 0.0
    common, k = max(counts.items(), key=lambda kv: kv[1])
    return common, 1.0 - k / n


def main():
    import argparse
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("image_dir")
    p.add_argument("--sway", action="store_true", help="a virtio-gpu display; alice's tty1 runs sway")
    p.add_argument("--badconfig", action="store_true", help="boot with a broken drop-in in the service's config")
    p.add_argument("--keep", action="store_true", help="keep the run folder (console.log) after qemu stops")
    a = p.parse_args()
    vm = VM(a.image_dir, sway=a.sway, badconfig=a.badconfig)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        vm.start()
        print("booted in %.1f s. qemu pid %d; run folder %s" % (vm.boot_seconds, vm.pid, vm.dir))
        print("  root shell on the serial console: socat -,raw,echo=0 UNIX-CONNECT:%s/serial.sock" % vm.dir)
        print("  QMP: %s/qmp.sock; console log: %s/console.log" % (vm.dir, vm.dir))
        print("Ctrl+C stops the guest.", flush=True)
        stop.wait(None if sys.stdin.isatty() else 600)
    except KeyboardInterrupt:
        pass
    except VMError as e:
        print("vm.py: %s" % e, file=sys.stderr)
        vm.stop()
        return 1
    finally:
        vm.stop()
        if not a.keep:
            shutil.rmtree(vm.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
