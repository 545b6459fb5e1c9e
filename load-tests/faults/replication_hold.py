#!/usr/bin/env python3
"""The redis-failover fault's stalled link: a TCP relay the replicas replicate through.

On SIGUSR1 it stops passing the master's replication stream on, while every connection stays open and the
replicas' acknowledgements still reach the master: the master keeps counting its replicas as good
(min-replicas-to-write) and keeps taking writes the replicas never see, as over a link that stalls without a
reset. Cutting the connections instead makes the master refuse writes at once (NOREPLICAS), so nothing is
lost. The hold is never released: the drill kills the relay with the master, and what it held is gone.

    replication_hold.py LISTEN_PORT MASTER_PORT
"""
import asyncio
import signal
import sys

held = False


async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, from_master: bool) -> None:
    try:
        while data := await reader.read(65536):
            if from_master and held:
                continue
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def main(listen: int, master: int) -> None:
    def hold() -> None:
        global held
        held = True

    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, hold)

    async def connect(replica_reader: asyncio.StreamReader, replica_writer: asyncio.StreamWriter) -> None:
        try:
            master_reader, master_writer = await asyncio.open_connection("127.0.0.1", master)
        except OSError:
            replica_writer.close()
            return
        await asyncio.gather(relay(replica_reader, master_writer, False), relay(master_reader, replica_writer, True))

    server = await asyncio.start_server(connect, "127.0.0.1", listen)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
