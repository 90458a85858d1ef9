import type { ConsoleOidcConfig } from '../config/console.config';
import { identify, OidcSignInError } from './oidc';

const config: ConsoleOidcConfig = {
  issuer: 'https://idp.example.com',
  clientId: 'console',
  scopes: 'openid email profile',
  adminEmails: ['root@example.com'],
  adminSubjects: ['admin-sub-7'],
  adminGroups: ['platform'],
  adminClaim: 'gateway_admin',
  groupsClaim: 'groups',
  teamClaim: 'team',
};

describe('identify (OIDC claims to a console role)', () => {
  it('makes an admin of a verified listed e-mail (any case), a listed subject or group, or a true admin claim', () => {
    const verified = { sub: '1', email: 'Root@Example.com', email_verified: true };
    expect(identify(verified, config)).toMatchObject({
      role: 'admin',
      grant: 'email:root@example.com',
      principal: 'oidc:1',
    });
    expect(identify({ sub: 'admin-sub-7' }, config).grant).toBe('subject');
    expect(identify({ sub: '2', groups: ['x', 'platform'] }, config).grant).toBe('group:platform');
    expect(identify({ sub: '3', gateway_admin: true }, config).grant).toBe('claim:gateway_admin');
  });

  it('grants nothing for a listed e-mail the provider has not verified, in any letter case', () => {
    for (const claims of [
      { sub: '8', email: 'ROOT@example.com', email_verified: false },
      { sub: '8', email: 'root@example.com' },
      { sub: '8', email: 'root@example.com', email_verified: 'true' },
    ]) {
      expect(() => identify(claims, config)).toThrow(/has not verified it/);
    }
    // With a team it is an ordinary member of that team, not an admin.
    expect(
      identify({ sub: '8', email: 'root@example.com', email_verified: false, team: 't' }, config)
        .role,
    ).toBe('member');
  });

  it('makes a member of the team the team claim names', () => {
    expect(identify({ sub: '4', email: 'a@example.com', team: 'search' }, config)).toEqual({
      role: 'member',
      team: 'search',
      name: 'a@example.com',
      principal: 'oidc:4',
      grant: 'team',
    });
  });

  it('does not take a truthy non-boolean admin claim, nor an inherited property, as admin', () => {
    expect(() => identify({ sub: '5', gateway_admin: 'yes' }, config)).toThrow(OidcSignInError);
    expect(() => identify({ sub: '6' }, { ...config, teamClaim: 'constructor' })).toThrow(
      OidcSignInError,
    );
    expect(() => identify({ email: 'root@example.com', email_verified: true }, config)).toThrow(
      /without a subject/,
    );
  });
});
