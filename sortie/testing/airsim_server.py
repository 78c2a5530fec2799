"""A local AirSim server that answers from an embedded world, for tests of the airsim backend.

It speaks msgpack-rpc over TCP (requests ``[0, id, method, params]``, responses ``[1, id,
error, result]``), the protocol of AirSim's RPC server, and answers the calls the backend
makes from an embedded simulator's multirotor: poses in NED metres with quaternions (through
``sortie.backends.frames``), pose moves that stop at the first contact (as the embedded body
does) and report it in ``simGetCollisionInfo``, ``simGetObjectPose`` of scene objects, and
uncompressed Scene (BGR) and DepthPlanar images. So the real ``cosysairsim`` client, over
loopback, sees real geometry.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

import msgpack
import numpy as np

from sortie.backends.embedded import EmbeddedBackend
from sortie.backends.frames import (
    ned_point,
    quaternion_yaw,
    to_ned,
    wrap_degrees,
    yaw_quaternion,
)
from sortie.core.episode import EpisodeSpec
from sortie.core.pose import Pose
from sortie.sim.bodies import Multirotor
from sortie.testing.loopback import LoopbackServer

NAN = float("nan")


def _vector(x: float, y: float, z: float) -> dict[str, float]:
    return {"x_val": x, "y_val": y, "z_val": z}


def _pose_message(pose: Pose) -> dict[str, Any]:
    north, east, down, yaw = to_ned(pose)
    w, x, y, z = yaw_quaternion(yaw)
    return {
        "position": _vector(north, east, down),
        "orientation": {"w_val": w, "x_val": x, "y_val": y, "z_val": z},
    }


def _pose_of(message: dict[str, Any]) -> Pose:
    p, q = message["position"], message["orientation"]
    x, y, z = ned_point(p["x_val"], p["y_val"], p["z_val"])
    yaw = -quaternion_yaw(q["w_val"], q["x_val"], q["y_val"], q["z_val"])
    return Pose(x, y, z, wrap_degrees(yaw))


class AirSimServer(LoopbackServer):
    """Serves ``episode``'s embedded world over AirSim's RPC on 127.0.0.1:``port``."""

    def __init__(self, episode: EpisodeSpec, camera: dict[str, Any], port: int = 0) -> None:
        """Build the world and listen (port 0: any free port; see ``self.port``)."""
        self.world = EmbeddedBackend(body="multirotor", camera=camera, sensors=("rgb", "depth"))
        self.world.reset(episode, 0)
        self.episode = episode
        self._collision: dict[str, Any] = self._no_collision(0.0)
        self._clock = 0.0
        super().__init__(port)

    def on_accept(self, connection: socket.socket) -> None:
        """Serve each client on its own thread (the AirSim client opens more than one)."""
        threading.Thread(target=super().on_accept, args=(connection,), daemon=True).start()

    def serve_connection(self, connection: socket.socket) -> None:
        """Answer msgpack-rpc requests until the client hangs up."""
        unpacker = msgpack.Unpacker(raw=False)
        while chunk := _receive(connection):
            unpacker.feed(chunk)
            for _, msgid, method, params in unpacker:
                try:
                    reply = [1, msgid, None, self.call(method, params)]
                except (KeyError, ValueError, TypeError) as error:
                    reply = [1, msgid, str(error), None]
                connection.sendall(msgpack.packb(reply, use_bin_type=True))

    # --- the calls -----------------------------------------------------------------------
    def call(self, method: str, params: list[Any]) -> Any:
        """Return the result of one RPC call."""
        if method in ("ping", "enableApiControl", "armDisarm", "isApiControlEnabled"):
            return True
        if method in ("getServerVersion", "getMinRequiredClientVersion"):
            return 4
        if method == "simGetVehiclePose":
            return _pose_message(self.world.pose())
        if method == "simSetVehiclePose":
            return self._set_pose(_pose_of(params[0]), bool(params[1]))
        if method == "moveToPosition":
            here = self.world.pose()
            x, y, z = ned_point(*params[:3])
            return self._set_pose(Pose(x, y, z, here.yaw), False)
        if method == "rotateToYaw":
            here = self.world.pose()
            return self._set_pose(Pose(here.x, here.y, here.z, -float(params[0])), False)
        if method == "simGetCollisionInfo":
            return self._collision
        if method == "simGetObjectPose":
            return self._object_pose(str(params[0]))
        if method == "simGetImages":
            return [self._image(request) for request in params[0]]
        raise KeyError(f"rpc method {method} not bound")

    def _set_pose(self, goal: Pose, ignore_collision: bool) -> None:
        body = self.world._require_body()
        assert isinstance(body, Multirotor)
        if ignore_collision:
            body.place(goal)
            return
        here = body.pose
        offset = np.subtract(goal.position(), here.position())
        length = float(np.linalg.norm(offset))
        travelled, contact = (0.0, None)
        if length > 1e-9:
            travelled, contact = body._sweep_to(here, offset / length, length)
        x, y, z = np.add(here.position(), offset / max(length, 1e-12) * travelled)
        body._pose = Pose(float(x), float(y), float(z), goal.yaw)
        if contact:
            self._clock += 1.0
            self._collision = self._no_collision(self._clock) | {
                "has_collided": True,
                "object_name": contact,
            }

    def _no_collision(self, stamp: float) -> dict[str, Any]:
        zero = _vector(0.0, 0.0, 0.0)
        return {
            "has_collided": False,
            "normal": zero,
            "impact_point": zero,
            "position": zero,
            "penetration_depth": 0.0,
            "time_stamp": stamp,
            "object_name": "",
            "object_id": -1,
        }

    def _object_pose(self, name: str) -> dict[str, Any]:
        names = {o.name for o in self.world.oracle_view().objects()}
        if name not in names:
            return {"position": _vector(NAN, NAN, NAN), "orientation": _vector(NAN, NAN, NAN)}
        x, y, z = self.world.position_of(name)
        return _pose_message(Pose(x, y, z, 0.0))

    def _image(self, request: dict[str, Any]) -> dict[str, Any]:
        depth = int(request["image_type"]) == 1
        frames = self.world._render(self.world.sensors)
        array = frames.depth if depth else frames.rgb
        assert array is not None
        h, w = array.shape[:2]
        response: dict[str, Any] = {
            "width": w,
            "height": h,
            "pixels_as_float": depth,
            "compress": False,
            "image_type": int(request["image_type"]),
            "camera_name": request["camera_name"],
            "message": "",
        }
        if depth:
            finite = np.where(np.isfinite(array), array, 1e4).astype(np.float32)
            return response | {"image_data_float": finite.ravel().tolist(), "image_data_uint8": b""}
        bgr = np.ascontiguousarray(array[..., ::-1])
        return response | {"image_data_uint8": bgr.tobytes(), "image_data_float": []}


def _receive(connection: socket.socket) -> bytes:
    try:
        return connection.recv(65536)
    except OSError:
        return b""
